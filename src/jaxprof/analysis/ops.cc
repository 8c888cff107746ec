#include "jaxprof/analysis/ops.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_map>

#include "jaxprof/analysis/category.h"
#include "jaxprof/analysis/device_events.h"
#include "jaxprof/analysis/intervals.h"
#include "jaxprof/analysis/self_time.h"

namespace jaxprof {

const char* group_by_name(GroupBy g) {
  switch (g) {
    case GroupBy::kHloOp:
      return "hlo-op";
    case GroupBy::kKernel:
      return "kernel";
    case GroupBy::kModule:
      return "module";
    case GroupBy::kName:
      return "name";
    case GroupBy::kCategory:
      return "category";
    case GroupBy::kOpcode:
      return "opcode";
  }
  return "?";
}

bool parse_group_by(std::string_view text, GroupBy& out) {
  for (GroupBy g : {GroupBy::kHloOp, GroupBy::kKernel, GroupBy::kModule, GroupBy::kName,
                    GroupBy::kCategory, GroupBy::kOpcode}) {
    if (text == group_by_name(g)) {
      out = g;
      return true;
    }
  }
  return false;
}

namespace {

// Running statistics of one group (Welford for the variance; exact integer sums).
struct Acc {
  uint64_t count = 0;
  int64_t total = 0, self = 0;
  int64_t min = std::numeric_limits<int64_t>::max(), max = std::numeric_limits<int64_t>::min();
  double mean = 0, m2 = 0;
  uint32_t first_event = 0;  // a representative, for names and HLO lookups

  void add(int64_t d, int64_t s) {
    ++count;
    total += d;
    self += s;
    min = std::min(min, d);
    max = std::max(max, d);
    double delta = static_cast<double>(d) - mean;
    mean += delta / static_cast<double>(count);
    m2 += delta * (static_cast<double>(d) - mean);
  }
  // Chan et al.'s combination of two partial variances.
  void merge(const Acc& o) {
    if (o.count == 0) return;
    if (count == 0) {
      *this = o;
      return;
    }
    double n = static_cast<double>(count), m = static_cast<double>(o.count);
    double delta = o.mean - mean;
    mean += delta * m / (n + m);
    m2 += o.m2 + delta * delta * n * m / (n + m);
    count += o.count;
    total += o.total;
    self += o.self;
    min = std::min(min, o.min);
    max = std::max(max, o.max);
  }
};

uint64_t pack(uint32_t hi, uint32_t lo) { return (static_cast<uint64_t>(hi) << 32) | lo; }

struct Grouper {
  const Profile& p;
  GroupBy by;

  // Key of event e; `fallback` marks hlo-op groups that fell back to the event name.
  uint64_t key(uint32_t e) const {
    const Events& ev = p.events;
    const EventMetadata& m = p.event_metadata[ev.metadata[e]];
    switch (by) {
      case GroupBy::kKernel:
        return m.name;
      case GroupBy::kName:
        return m.display_name != 0 ? m.display_name : m.name;
      case GroupBy::kModule:
        return ev.module[e];
      case GroupBy::kHloOp:
      case GroupBy::kCategory:
      case GroupBy::kOpcode: {
        uint32_t module_name = p.modules[ev.module[e]].name;
        if (ev.hlo_op[e] != 0) return pack(module_name, ev.hlo_op[e]);
        // No HLO op: group by event name, kept apart from real op names by the top bit.
        return pack(module_name | 0x80000000u, m.display_name != 0 ? m.display_name : m.name);
      }
    }
    return 0;
  }
};

struct GroupInfo {
  std::string name, module, opcode, op_name, source;
  ProgramId program_id = kNoProgram;
};

GroupInfo describe(const Profile& p, GroupBy by, uint64_t key, uint32_t e, uint32_t plane) {
  GroupInfo g;
  const Events& ev = p.events;
  const ModuleKey& mk = p.modules[ev.module[e]];
  switch (by) {
    case GroupBy::kKernel:
    case GroupBy::kName:
      g.name = std::string(p.str(static_cast<StringId>(key)));
      return g;
    case GroupBy::kModule:
      g.name = mk.name == 0 ? "(no module)" : std::string(p.str(mk.name));
      g.program_id = mk.program_id;
      return g;
    case GroupBy::kHloOp:
    case GroupBy::kCategory:
    case GroupBy::kOpcode:
      break;
  }
  g.name = std::string(p.str(static_cast<StringId>(key & 0xffffffffu)));
  g.module = std::string(p.str(mk.name));
  g.program_id = mk.program_id;
  if (ev.hlo_op[e] == 0) return g;
  if (const HloModule* mod = p.hlo.find(hlo_program_key(mk.program_id), p.str(mk.name))) {
    if (const HloInstruction* instr = mod->find(g.name)) {
      g.opcode = std::string(instr->opcode);
      g.op_name = std::string(instr->op_name);
      g.source = mod->source_line(*instr);
    }
  }
  if (g.op_name.empty()) {
    // GPU kernels carry the JAX op path as the tf_op stat; "XlaModule:" is a placeholder.
    if (auto v = p.event_stat(plane, e, "tf_op"); v && v->is_text()) {
      std::string_view op = v->str;
      if (op.ends_with(':')) op.remove_suffix(1);
      if (op.find('/') != std::string_view::npos) g.op_name = std::string(op);
    }
  }
  return g;
}

void finish(OpGroup& out, const Acc& a, int64_t busy) {
  out.count = a.count;
  out.total_ps = a.total;
  out.self_ps = a.self;
  out.min_ps = a.count ? a.min : 0;
  out.max_ps = a.count ? a.max : 0;
  out.mean_ps = a.count ? static_cast<double>(a.total) / static_cast<double>(a.count) : 0;
  out.std_ps = a.count ? std::sqrt(std::max(0.0, a.m2 / static_cast<double>(a.count))) : 0;
  out.share = busy > 0 ? static_cast<double>(a.self) / static_cast<double>(busy) : 0;
}

}  // namespace

OpsResult compute_ops(const Profile& p, const OpsOptions& options) {
  EventFilter filter(options.filter);
  OpsResult result;
  result.group_by = options.group_by;
  Grouper grouper{p, options.group_by};
  uint64_t budget =
      options.filter.max_events ? options.filter.max_events : std::numeric_limits<uint64_t>::max();
  bool capped = false;

  // Name filters depend only on the event metadata: decide once per metadata entry.
  std::vector<int8_t> name_ok(p.event_metadata.size(), -1);

  std::vector<DeviceLines> devices = op_devices(p);
  std::vector<uint32_t> needed;
  for (const DeviceLines& dev : devices)
    if (filter.keeps_device(dev.name))
      needed.insert(needed.end(), dev.lines.begin(), dev.lines.end());
  p.require_lines(needed);  // one decoding pass for all devices
  const SteadyState& steady = steady_state(p, options.steady);

  for (const DeviceLines& dev : devices) {
    const Plane& plane = p.planes[dev.plane];
    const std::string& device_name = dev.name;
    if (!filter.keeps_device(device_name)) continue;
    DeviceOps out;
    out.device = device_name;
    out.host = p.hosts[plane.host].name;

    std::unordered_map<uint64_t, Acc> groups;
    std::vector<Interval> busy;
    int64_t first = std::numeric_limits<int64_t>::max(), last = std::numeric_limits<int64_t>::min();
    std::vector<int64_t> self;
    std::vector<uint8_t> participates;
    uint64_t last_key = ~uint64_t{0};
    Acc* last_acc = nullptr;

    for (uint32_t li : dev.lines) {
      const Line& line = p.lines[li];
      const Events& ev = p.events;
      uint32_t b = line.first_event, n = line.event_count;
      if (dev.hlo_ops_only) {
        participates.assign(n, 0);
        for (uint32_t k = 0; k < n; ++k) participates[k] = dev.counts(ev, b + k);
      }
      compute_self_times(ev, b, n, self, dev.hlo_ops_only ? &participates : nullptr);
      Interval cur{0, -1};
      for (uint32_t k = 0; k < n; ++k) {
        uint32_t e = b + k;
        if (!dev.counts(ev, e)) continue;
        if (steady.set_apart(e)) {
          ++out.set_apart;
          continue;
        }
        int64_t s = ev.start_ps[e], d = ev.duration_ps[e], en = s + d;
        ++out.events;
        first = std::min(first, s);
        last = std::max(last, en);
        // Events on a line are sorted by start: merge the line's union on the fly.
        if (cur.end >= cur.begin && s <= cur.end) {
          cur.end = std::max(cur.end, en);
        } else {
          if (cur.end > cur.begin) busy.push_back(cur);
          cur = {s, en};
        }
        uint32_t mi = ev.metadata[e];
        if (filter.filters_names()) {
          if (name_ok[mi] < 0) name_ok[mi] = filter.keeps_name(p.event_display_name(e)) ? 1 : 0;
          if (!name_ok[mi]) continue;
        }
        if (d < options.filter.min_duration_ps) continue;
        if (budget == 0) {
          capped = true;
          continue;
        }
        --budget;
        ++out.selected;
        uint64_t key = grouper.key(e);
        if (key != last_key || last_acc == nullptr) {
          auto [it, inserted] = groups.try_emplace(key);
          if (inserted) it->second.first_event = e;
          last_acc = &it->second;
          last_key = key;
        }
        last_acc->add(d, self[k]);
      }
      if (cur.end > cur.begin) busy.push_back(cur);
      last_acc = nullptr;  // the map may rehash between lines
    }
    if (out.events == 0) continue;
    out.busy_ps = union_length(busy);
    out.span_ps = last - first;

    if (options.group_by == GroupBy::kCategory || options.group_by == GroupBy::kOpcode) {
      // Both are unions of hlo-op groups: describe each op once, then merge by its label.
      std::unordered_map<std::string, Acc> merged;
      for (auto& [key, acc] : groups) {
        GroupInfo info = describe(p, GroupBy::kHloOp, key, acc.first_event, dev.plane);
        std::string label;
        if (options.group_by == GroupBy::kOpcode) {
          label = info.opcode.empty() ? kUnknownOpcode : info.opcode;
        } else {
          std::string kernel(p.event_name(acc.first_event));
          label = category_name(
              categorize(info.opcode, info.opcode.empty() ? std::string_view(kernel) : info.name,
                         info.op_name));
        }
        merged[label].merge(acc);
      }
      for (auto& [label, acc] : merged) {
        OpGroup& g = out.groups.emplace_back();
        g.name = label;
        if (options.group_by == GroupBy::kCategory) g.category = g.name;
        if (options.group_by == GroupBy::kOpcode) g.opcode = g.name;
        finish(g, acc, out.busy_ps);
      }
    } else {
      out.groups.reserve(groups.size());
      for (auto& [key, acc] : groups) {
        GroupInfo info = describe(p, options.group_by, key, acc.first_event, dev.plane);
        OpGroup& g = out.groups.emplace_back();
        g.name = std::move(info.name);
        g.module = std::move(info.module);
        g.program_id = info.program_id;
        g.opcode = std::move(info.opcode);
        g.op_name = std::move(info.op_name);
        g.source = std::move(info.source);
        if (options.group_by == GroupBy::kHloOp) {
          std::string kernel(p.event_name(acc.first_event));
          g.category = category_name(categorize(
              g.opcode, g.opcode.empty() ? std::string_view(kernel) : std::string_view(g.name),
              g.op_name));
        }
        finish(g, acc, out.busy_ps);
      }
    }
    std::sort(out.groups.begin(), out.groups.end(), [](const OpGroup& a, const OpGroup& b) {
      if (a.total_ps != b.total_ps) return a.total_ps > b.total_ps;
      if (a.name != b.name) return a.name < b.name;
      return a.module < b.module;
    });
    if (options.top > 0 && out.groups.size() > options.top) out.groups.resize(options.top);
    result.devices.push_back(std::move(out));
  }
  if (capped)
    result.warnings.push_back(
        fmt::format("stopped at --max-events {}: later events are not counted in the groups",
                    options.filter.max_events));
  return result;
}

}  // namespace jaxprof
