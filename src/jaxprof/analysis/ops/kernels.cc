#include "jaxprof/analysis/ops/kernels.h"

#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <unordered_map>

#include "jaxprof/analysis/ops/device_events.h"
#include "jaxprof/analysis/ops/memory_op.h"
#include "jaxprof/analysis/ops/natural_order.h"
#include "jaxprof/analysis/partial/extract_partials.h"
#include "jaxprof/analysis/partial/partial_build.h"

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

// One kernel (name and display name) on one device.
struct Acc {
  uint64_t count = 0;
  int64_t total = 0;
  int64_t min = std::numeric_limits<int64_t>::max();
  int64_t max = std::numeric_limits<int64_t>::min();
  uint64_t first = 0;  // its first launch among the device's launches
  std::map<std::string_view, std::pair<uint64_t, int64_t>> configs;  // details -> count, time
  struct Op {
    int64_t total = 0;
    uint64_t first = 0;
    std::string_view tf_op;  // of its first launch
  };
  std::map<std::pair<uint32_t, StringId>, Op> ops;  // (module, hlo_op)
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

void extract_kernels(PartialBuild& b, const EventFilterSpec& spec) {
  const Profile& p = b.p;
  EventFilter filter(spec);
  std::vector<std::set<std::string>> other_devices(b.hosts.size());
  std::vector<uint32_t> planes, needed;
  for (uint32_t pi = 0; pi < p.planes.size(); ++pi) {
    const Plane& plane = p.planes[pi];
    PartialKernels& k = b.hosts[plane.host].kernels;
    std::string_view name = p.str(plane.name);
    bool has_events = false, has_ops = false;
    for (uint32_t li : plane.lines) {
      has_events |= p.lines[li].event_count > 0;
      has_ops |= p.lines[li].event_count > 0 && is_op_line(p, p.lines[li]);
    }
    if (plane.kind == PlaneKind::kHostCpu) k.host_cpu = true;
    // Named only when `ops` reports them: not a TPU's SparseCore or Megascale Trace planes.
    if (plane.kind == PlaneKind::kTpu || plane.kind == PlaneKind::kOtherDevice) {
      if (has_ops) other_devices[plane.host].insert(std::string(name));
      continue;
    }
    if (plane.kind != PlaneKind::kGpu) continue;
    k.gpu_events |= has_events;
    if (!filter.keeps_device(name)) continue;
    std::vector<uint32_t> lines;
    for (uint32_t li : plane.lines)
      if (p.lines[li].event_count > 0 && is_op_line(p, p.lines[li])) lines.push_back(li);
    if (lines.empty()) continue;
    planes.push_back(pi);
    needed.insert(needed.end(), lines.begin(), lines.end());
  }
  for (size_t h = 0; h < b.hosts.size(); ++h)
    b.hosts[h].kernels.other_devices.assign(other_devices[h].begin(), other_devices[h].end());
  p.require_lines(needed);
  const SteadyState& steady = steady_state(p, b.steady);

  std::unordered_map<uint32_t, Launch> metadata_launch;  // metadata stats, read once per entry
  std::vector<int8_t> name_ok(p.event_metadata.size(), -1);
  const Events& ev = p.events;
  for (uint32_t pi : planes) {
    const Plane& plane = p.planes[pi];
    HostPartial& host = b.hosts[plane.host];
    PartialKernelDevice& out = host.kernels.devices.emplace_back();
    out.name = std::string(p.str(plane.name));
    std::map<std::pair<StringId, StringId>, Acc> groups;  // (name, display name)
    uint64_t launches = 0;
    for (uint32_t li : plane.lines) {
      const Line& line = p.lines[li];
      if (line.event_count == 0 || !is_op_line(p, line)) continue;
      const LineMemoryOps memory_op(p, li);
      for (uint32_t e = line.first_event; e < line.first_event + line.event_count; ++e) {
        if (steady.set_apart(e)) continue;
        uint32_t mi = ev.metadata[e];
        if (filter.filters_names()) {
          if (name_ok[mi] < 0) name_ok[mi] = filter.keeps_name(p.event_display_name(e)) ? 1 : 0;
          if (!name_ok[mi]) continue;
        }
        int64_t d = ev.op_duration_ps(line, e);
        if (d < spec.min_duration_ps) continue;
        Launch launch;
        scan(p, p.event_stats(pi, e), launch);
        auto [it, inserted] = metadata_launch.try_emplace(mi);
        if (inserted) scan(p, p.metadata_stats(mi), it->second);
        const Launch& meta = it->second;
        if (launch.details.empty()) launch.details = meta.details;
        if (launch.tf_op.empty()) launch.tf_op = meta.tf_op;
        // Stream lines also carry copies and fills (their stats or their stream say so,
        // memory_op.h); a kernel_details stat means a real launch.
        if ((launch.memory_op || meta.memory_op || memory_op(e) != MemoryOp::kNone) &&
            launch.details.empty())
          continue;

        const EventMetadata& m = p.event_metadata[mi];
        Acc& a = groups[{m.name, m.display_name != 0 ? m.display_name : m.name}];
        const uint64_t position = launches++;
        if (a.count == 0) a.first = position;
        ++a.count;
        a.total += d;
        a.min = std::min(a.min, d);
        a.max = std::max(a.max, d);
        auto& c = a.configs[launch.details];
        ++c.first;
        c.second += d;
        auto [op, added] = a.ops.try_emplace({ev.module[e], ev.hlo_op[e]});
        if (added) {
          op->second.first = position;
          op->second.tf_op = launch.tf_op;
        }
        op->second.total += d;
      }
    }
    std::vector<std::pair<const std::pair<StringId, StringId>*, const Acc*>> order;
    for (const auto& [key, a] : groups) order.push_back({&key, &a});
    std::sort(order.begin(), order.end(),
              [](const auto& x, const auto& y) { return x.second->first < y.second->first; });
    for (const auto& [key, a] : order) {
      PartialKernel& k = out.kernels.emplace_back();
      k.name = host.strings.id(p.str(key->first));
      k.display = host.strings.id(p.str(key->second));
      k.count = a->count;
      k.total_ps = a->total;
      k.min_ps = a->min;
      k.max_ps = a->max;
      for (const auto& [details, c] : a->configs)
        k.configs.push_back({host.strings.id(details), c.first, c.second});
      for (const auto& [op_key, op] : a->ops) {
        auto [module, hlo_op] = op_key;
        k.ops.push_back({b.module(plane.host, module), host.strings.id(p.str(hlo_op)), op.total,
                         op.first, host.strings.id(op_name_of(p, module, hlo_op, op.tf_op))});
      }
      std::sort(k.ops.begin(), k.ops.end(), [](const PartialKernelOp& x, const PartialKernelOp& y) {
        return x.first < y.first;
      });
    }
  }
}

namespace {

// A kernel name over the set.
struct Group {
  uint64_t count = 0;
  int64_t total = 0;
  int64_t min = std::numeric_limits<int64_t>::max();
  int64_t max = std::numeric_limits<int64_t>::min();
  uint32_t devices = 0;
  size_t last_device = SIZE_MAX;  // the device that last added to it
  // Owned: the hosts are read one at a time, each dropped before the next.
  std::map<std::string, std::pair<uint64_t, int64_t>> configs;
  struct Op {
    int64_t total = 0;
    std::pair<size_t, uint64_t> first{SIZE_MAX, 0};  // its earliest launch: device, position
    std::string op_name;                             // of that launch
  };
  // (module, program id, HLO op): in this order, ties for the most time go to the first.
  std::map<std::tuple<std::string, ProgramId, std::string>, Op> ops;
};

}  // namespace

KernelsResult kernels_from_partials(const PartialSet& set, const KernelsOptions& options) {
  set.require(kPartKernels, "kernels");
  set.require_steady(options.steady, "kernels");
  EventFilter filter(options.filter);
  KernelsResult result;
  std::map<std::string, Group> groups;
  std::set<std::string> other_devices;
  bool any_gpu = false, host_cpu = false, planes = false;
  size_t device_number = 0;
  set.for_each_host(
      [&](uint32_t, const HostPartial& h) {
        const PartialKernels& hk = h.kernels;
        any_gpu |= hk.gpu_events;
        host_cpu |= hk.host_cpu;
        other_devices.insert(hk.other_devices.begin(), hk.other_devices.end());
        for (const PartialKernelDevice& kd : hk.devices) {
          const size_t device = device_number++;
          if (!filter.keeps_device(kd.name)) continue;
          planes = true;
          bool any = false;
          for (const PartialKernel& k : kd.kernels) {
            if (filter.filters_names() && !filter.keeps_name(h.str(k.display))) continue;
            Group& g = groups[std::string(h.str(k.name))];
            g.count += k.count;
            g.total += k.total_ps;
            g.min = std::min(g.min, k.min_ps);
            g.max = std::max(g.max, k.max_ps);
            if (g.last_device != device) ++g.devices;
            g.last_device = device;
            for (const PartialKernelConfig& c : k.configs) {
              auto& gc = g.configs[std::string(h.str(c.details))];
              gc.first += c.count;
              gc.second += c.total_ps;
            }
            for (const PartialKernelOp& op : k.ops) {
              Group::Op& o =
                  g.ops[{std::string(h.module_name(op.module)), h.modules[op.module].program_id,
                         std::string(h.str(op.hlo_op))}];
              if (std::pair(device, op.first) < o.first) {
                o.first = {device, op.first};
                o.op_name = h.str(op.op_name);
              }
              o.total += op.total_ps;
            }
            result.kernel_events += k.count;
            result.total_ps += k.total_ps;
            any = true;
          }
          if (any) result.devices.push_back(kd.name);
        }
      },
      kPartKernels);

  std::stable_sort(result.devices.begin(), result.devices.end(),
                   [](const std::string& a, const std::string& b) { return natural_less(a, b); });
  for (auto& [name, a] : groups) {
    KernelGroup& g = result.kernels.emplace_back();
    g.name = std::string(name);
    g.count = a.count;
    g.total_ps = a.total;
    g.min_ps = a.min;
    g.max_ps = a.max;
    g.mean_ps = static_cast<double>(a.total) / static_cast<double>(a.count);
    g.devices = a.devices;
    for (const auto& [details, c] : a.configs) {
      KernelConfig& kc = g.configs.emplace_back();
      kc.details = std::string(details);
      kc.parsed = parse_kernel_details(details);
      kc.count = c.first;
      kc.total_ps = c.second;
    }
    std::sort(g.configs.begin(), g.configs.end(), [](const KernelConfig& x, const KernelConfig& y) {
      if (x.total_ps != y.total_ps) return x.total_ps > y.total_ps;
      return x.details < y.details;
    });
    // The op behind most of the kernel's time, a named one when there is one.
    const std::pair<const std::tuple<std::string, ProgramId, std::string>, Group::Op>* best =
        nullptr;
    for (const auto& entry : a.ops) {
      const bool named = !std::get<2>(entry.first).empty();
      if (named) ++g.hlo_ops;
      if (!named && a.ops.size() > 1) continue;
      if (!best || entry.second.total > best->second.total) best = &entry;
    }
    if (best) {
      g.hlo_op = std::string(std::get<2>(best->first));
      g.module = std::string(std::get<0>(best->first));
      g.op_name = std::string(best->second.op_name);
    }
  }
  std::sort(result.kernels.begin(), result.kernels.end(),
            [](const KernelGroup& x, const KernelGroup& y) {
              if (x.total_ps != y.total_ps) return x.total_ps > y.total_ps;
              return x.name < y.name;
            });
  result.kernels_total = result.kernels.size();
  if (options.top > 0 && result.kernels.size() > options.top) result.kernels.resize(options.top);

  if (result.kernel_events == 0) {
    if (!planes && any_gpu) {
      result.no_gpu_reason = "no GPU kernels on the devices --device selects";
    } else if (!planes && other_devices.empty()) {
      result.no_gpu_reason =
          "no GPU kernels: the profile has no /device:GPU plane with stream events";
      if (host_cpu) result.no_gpu_reason += " (it is a CPU-backend or host-only profile)";
    } else if (!planes) {
      std::string list;
      std::vector<std::string> others(other_devices.begin(), other_devices.end());
      std::sort(others.begin(), others.end(),
                [](const std::string& a, const std::string& b) { return natural_less(a, b); });
      for (const std::string& d : others) list += (list.empty() ? "" : ", ") + d;
      result.no_gpu_reason = "no GPU kernels: the profile's devices are " + list +
                             " (use `jaxprof ops` for their op times)";
    } else {
      result.no_gpu_reason = "no GPU kernel events matched the filters";
    }
  }
  return result;
}

KernelsResult compute_kernels(const Profile& p, const KernelsOptions& options) {
  EventFilter check(options.filter);  // a bad regex is reported before anything is read
  PartialExtractOptions extract;
  extract.parts = kPartKernels;
  extract.kernel_filter = options.filter;
  extract.steady = options.steady;
  return kernels_from_partials(PartialSet(extract_partials(p, extract)), options);
}

}  // namespace jaxprof
