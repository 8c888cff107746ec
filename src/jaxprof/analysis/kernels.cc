#include "jaxprof/analysis/kernels.h"

#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <unordered_map>

#include "jaxprof/analysis/device_events.h"

namespace jaxprof {

namespace {

struct Launch {
  std::string_view details;
  bool memory_op = false;  // a memcpy or memset on a stream line: not a kernel
  std::string_view tf_op;
};

// Reads what the kernel table needs from a stat list (the event's own, or its metadata's).
void scan(const Profile& p, const std::vector<Stat>& stats, Launch& out) {
  for (const Stat& s : stats) {
    std::string_view name = p.str(s.name);
    if (name == "kernel_details" && s.value.is_text() && out.details.empty()) {
      out.details = s.value.str;
    } else if (name == "memcpy_details" || name == "memset_details") {
      out.memory_op = true;
    } else if (name == "tf_op" && s.value.is_text() && out.tf_op.empty()) {
      out.tf_op = s.value.str;
    }
  }
}

struct Acc {
  uint64_t count = 0;
  int64_t total = 0;
  int64_t min = std::numeric_limits<int64_t>::max();
  int64_t max = std::numeric_limits<int64_t>::min();
  std::set<uint32_t> planes;
  std::map<std::string_view, KernelConfig> configs;
  std::map<std::pair<uint32_t, StringId>, std::pair<int64_t, uint32_t>> ops;  // -> time, event
  std::map<uint32_t, std::string_view> tf_op_of_event;
};

std::string op_name_of(const Profile& p, uint32_t module, StringId hlo_op, std::string_view tf_op) {
  // tf_op "XlaModule:" style placeholders carry no op path.
  if (tf_op.ends_with(':')) tf_op.remove_suffix(1);
  if (tf_op.find('/') != std::string_view::npos) return std::string(tf_op);
  const ModuleKey& mk = p.modules[module];
  if (hlo_op == 0) return {};
  if (const HloModule* m = p.hlo.find(hlo_program_key(mk.program_id), p.str(mk.name)))
    if (const HloInstruction* instr = m->find(p.str(hlo_op))) return std::string(instr->op_name);
  return {};
}

}  // namespace

KernelsResult compute_kernels(const Profile& p, const KernelsOptions& options) {
  EventFilter filter(options.filter);
  KernelsResult result;

  std::vector<uint32_t> planes, needed;
  std::set<std::string> other_devices;
  bool any_gpu = false;  // before the --device filter
  for (uint32_t pi = 0; pi < p.planes.size(); ++pi) {
    const Plane& plane = p.planes[pi];
    std::string_view name = p.str(plane.name);
    bool has_events = false;
    for (uint32_t li : plane.lines) has_events |= p.lines[li].event_count > 0;
    if (plane.kind == PlaneKind::kTpu || plane.kind == PlaneKind::kOtherDevice) {
      if (has_events) other_devices.insert(std::string(name));
      continue;
    }
    if (plane.kind != PlaneKind::kGpu) continue;
    any_gpu |= has_events;
    if (!filter.keeps_device(name)) continue;
    std::vector<uint32_t> lines;
    for (uint32_t li : plane.lines)
      if (p.lines[li].event_count > 0 && is_op_line(p, p.lines[li])) lines.push_back(li);
    if (lines.empty()) continue;
    planes.push_back(pi);
    needed.insert(needed.end(), lines.begin(), lines.end());
  }
  p.require_lines(needed);
  const SteadyState& steady = steady_state(p, options.steady);

  std::unordered_map<uint32_t, Launch> metadata_launch;  // metadata stats, read once per entry
  std::vector<int8_t> name_ok(p.event_metadata.size(), -1);
  std::unordered_map<StringId, Acc> groups;
  const Events& ev = p.events;
  for (uint32_t pi : planes) {
    const Plane& plane = p.planes[pi];
    bool any = false;
    for (uint32_t li : plane.lines) {
      const Line& line = p.lines[li];
      if (line.event_count == 0 || !is_op_line(p, line)) continue;
      for (uint32_t e = line.first_event; e < line.first_event + line.event_count; ++e) {
        if (steady.set_apart(e)) continue;
        uint32_t mi = ev.metadata[e];
        if (filter.filters_names()) {
          if (name_ok[mi] < 0) name_ok[mi] = filter.keeps_name(p.event_display_name(e)) ? 1 : 0;
          if (!name_ok[mi]) continue;
        }
        int64_t d = ev.duration_ps[e];
        if (d < options.filter.min_duration_ps) continue;
        Launch launch;
        scan(p, p.event_stats(pi, e), launch);
        auto [it, inserted] = metadata_launch.try_emplace(mi);
        if (inserted) scan(p, p.metadata_stats(mi), it->second);
        const Launch& meta = it->second;
        if (launch.details.empty()) launch.details = meta.details;
        if (launch.tf_op.empty()) launch.tf_op = meta.tf_op;
        // Stream lines also carry copies and fills; a kernel_details stat means a real launch.
        if ((launch.memory_op || meta.memory_op) && launch.details.empty()) continue;

        Acc& a = groups[p.event_metadata[mi].name];
        ++a.count;
        a.total += d;
        a.min = std::min(a.min, d);
        a.max = std::max(a.max, d);
        a.planes.insert(pi);
        KernelConfig& c = a.configs[launch.details];
        ++c.count;
        c.total_ps += d;
        auto& op = a.ops[{ev.module[e], ev.hlo_op[e]}];
        if (op.first == 0 && op.second == 0) {
          op.second = e;
          a.tf_op_of_event[e] = launch.tf_op;
        }
        op.first += d;
        ++result.kernel_events;
        result.total_ps += d;
        any = true;
      }
    }
    if (any) result.devices.push_back(std::string(p.str(plane.name)));
  }

  for (auto& [name, a] : groups) {
    KernelGroup& g = result.kernels.emplace_back();
    g.name = std::string(p.str(name));
    g.count = a.count;
    g.total_ps = a.total;
    g.min_ps = a.min;
    g.max_ps = a.max;
    g.mean_ps = static_cast<double>(a.total) / static_cast<double>(a.count);
    g.devices = static_cast<uint32_t>(a.planes.size());
    for (auto& [details, c] : a.configs) {
      c.details = std::string(details);
      c.parsed = parse_kernel_details(details);
      g.configs.push_back(std::move(c));
    }
    std::sort(g.configs.begin(), g.configs.end(), [](const KernelConfig& x, const KernelConfig& y) {
      if (x.total_ps != y.total_ps) return x.total_ps > y.total_ps;
      return x.details < y.details;
    });
    // The op behind most of the kernel's time; ties go to the first in (module, op) order.
    const std::pair<const std::pair<uint32_t, StringId>, std::pair<int64_t, uint32_t>>* best =
        nullptr;
    for (const auto& entry : a.ops) {
      if (entry.first.second != 0) ++g.hlo_ops;
      if (entry.first.second == 0 && a.ops.size() > 1) continue;  // prefer a named op
      if (!best || entry.second.first > best->second.first) best = &entry;
    }
    if (best) {
      auto [module, hlo_op] = best->first;
      if (hlo_op != 0) g.hlo_op = std::string(p.str(hlo_op));
      if (p.modules[module].name != 0) g.module = std::string(p.str(p.modules[module].name));
      g.op_name = op_name_of(p, module, hlo_op, a.tf_op_of_event[best->second.second]);
    }
  }
  std::sort(result.kernels.begin(), result.kernels.end(),
            [](const KernelGroup& x, const KernelGroup& y) {
              if (x.total_ps != y.total_ps) return x.total_ps > y.total_ps;
              return x.name < y.name;
            });
  if (options.top > 0 && result.kernels.size() > options.top) result.kernels.resize(options.top);

  if (result.kernel_events == 0) {
    if (planes.empty() && any_gpu) {
      result.no_gpu_reason = "no GPU kernels on the devices --device selects";
    } else if (planes.empty() && other_devices.empty()) {
      result.no_gpu_reason =
          "no GPU kernels: the profile has no /device:GPU plane with stream events";
      for (const Plane& plane : p.planes)
        if (plane.kind == PlaneKind::kHostCpu) {
          result.no_gpu_reason += " (it is a CPU-backend or host-only profile)";
          break;
        }
    } else if (planes.empty()) {
      std::string list;
      for (const std::string& d : other_devices) list += (list.empty() ? "" : ", ") + d;
      result.no_gpu_reason = "no GPU kernels: the profile's devices are " + list +
                             " (use `jaxprof ops` for their op times)";
    } else {
      result.no_gpu_reason = "no GPU kernel events matched the filters";
    }
  }
  return result;
}

}  // namespace jaxprof
