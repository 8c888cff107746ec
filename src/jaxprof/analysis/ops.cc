#include "jaxprof/analysis/ops.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_map>

#include "jaxprof/analysis/category.h"
#include "jaxprof/analysis/device_events.h"
#include "jaxprof/analysis/intervals.h"
#include "jaxprof/analysis/memory_op.h"
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
  bool memory = false;       // its stats or line say it is a copy or fill (memory_op.h)
  // The modules (name and program) its events came from, first_event's first: groups of one
  // name merge programs unless split by program, and then say which ones they hold.
  std::vector<uint32_t> modules;

  void note_module(uint32_t m) {
    if (modules.empty() || (m != modules.front() &&
                            std::find(modules.begin(), modules.end(), m) == modules.end()))
      modules.push_back(m);
  }

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
    for (uint32_t m : o.modules) note_module(m);
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
  bool by_program;  // hlo-op groups keyed by module and program, not module name alone

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
        uint32_t module_name = by_program ? ev.module[e] : p.modules[ev.module[e]].name;
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
  std::vector<ProgramId> program_ids;
};

// `module`: the one whose HLO describes the group (e's own unless told).
GroupInfo describe(const Profile& p, GroupBy by, uint64_t key, uint32_t e, uint32_t plane,
                   uint32_t module) {
  GroupInfo g;
  const Events& ev = p.events;
  const ModuleKey& mk = p.modules[module];
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
  if (g.op_name.empty() && module == ev.module[e]) {
    // GPU kernels carry the JAX op path as the tf_op stat; "XlaModule:" is a placeholder.
    if (auto v = p.event_stat(plane, e, "tf_op"); v && v->is_text()) {
      std::string_view op = v->str;
      if (op.ends_with(':')) op.remove_suffix(1);
      if (op.find('/') != std::string_view::npos) g.op_name = std::string(op);
    }
  }
  return g;
}

// An hlo-op group's description over every program it holds: each program's HLO is looked up
// in that program alone, and a field the programs disagree on stays unknown (empty).
GroupInfo describe_programs(const Profile& p, uint64_t key, const Acc& acc, uint32_t plane) {
  GroupInfo g = describe(p, GroupBy::kHloOp, key, acc.first_event, plane, acc.modules.front());
  for (uint32_t m : acc.modules) g.program_ids.push_back(p.modules[m].program_id);
  std::sort(g.program_ids.begin(), g.program_ids.end());
  g.program_ids.erase(std::unique(g.program_ids.begin(), g.program_ids.end()),
                      g.program_ids.end());
  if (acc.modules.size() == 1) return g;
  g.program_id = g.program_ids.size() == 1 ? g.program_ids.front() : kNoProgram;
  for (size_t i = 1; i < acc.modules.size(); ++i) {
    GroupInfo o = describe(p, GroupBy::kHloOp, key, acc.first_event, plane, acc.modules[i]);
    if (o.opcode != g.opcode) g.opcode.clear();
    if (o.op_name != g.op_name) g.op_name.clear();
    if (o.source != g.source) g.source.clear();
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
  // Category and opcode groups are unions of hlo-op groups taken one program at a time, so that
  // each is described by its own program's HLO.
  Grouper grouper{p, options.group_by,
                  options.by_program || options.group_by == GroupBy::kCategory ||
                      options.group_by == GroupBy::kOpcode};
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
      compute_op_self_times(ev, line, self, dev.hlo_ops_only ? &participates : nullptr);
      const LineMemoryOps memory_op(p, li);
      Interval cur{0, -1};
      for (uint32_t k = 0; k < n; ++k) {
        uint32_t e = b + k;
        if (!dev.counts(ev, e)) continue;
        // Placement (the busy union, span) on the timeline; the op's own time on its clock.
        int64_t s = ev.start_ps[e], en = ev.end_ps(e), d = ev.duration_ps[e];
        ++out.events;
        if (line.device_clock && ev.device_duration_ps[e] != Events::kNoStat) {
          d = ev.device_duration_ps[e];
          ++out.device_clock_events;
        }
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
          if (inserted) {
            it->second.first_event = e;
            it->second.memory = !memory_op.never() && memory_op(e) != MemoryOp::kNone;
          }
          last_acc = &it->second;
          last_key = key;
        }
        last_acc->add(d, self[k]);
        if (last_acc->modules.empty() || ev.module[e] != last_acc->modules.front())
          last_acc->note_module(ev.module[e]);
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
        GroupInfo info = describe_programs(p, key, acc, dev.plane);
        std::string label;
        if (options.group_by == GroupBy::kOpcode) {
          label = info.opcode.empty() ? kUnknownOpcode : info.opcode;
        } else {
          std::string kernel(p.event_name(acc.first_event));
          label = category_name(
              acc.memory ? OpCategory::kMemcpy
                         : categorize(info.opcode,
                                      info.opcode.empty() ? std::string_view(kernel) : info.name,
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
        GroupInfo info = options.group_by == GroupBy::kHloOp
                             ? describe_programs(p, key, acc, dev.plane)
                             : describe(p, options.group_by, key, acc.first_event, dev.plane,
                                        p.events.module[acc.first_event]);
        OpGroup& g = out.groups.emplace_back();
        g.name = std::move(info.name);
        g.module = std::move(info.module);
        g.program_id = info.program_id;
        g.program_ids = std::move(info.program_ids);
        g.opcode = std::move(info.opcode);
        g.op_name = std::move(info.op_name);
        g.source = std::move(info.source);
        if (options.group_by == GroupBy::kHloOp) {
          std::string kernel(p.event_name(acc.first_event));
          g.category = category_name(
              acc.memory ? OpCategory::kMemcpy
                         : categorize(g.opcode,
                                      g.opcode.empty() ? std::string_view(kernel)
                                                       : std::string_view(g.name),
                                      g.op_name));
        }
        finish(g, acc, out.busy_ps);
      }
    }
    std::sort(out.groups.begin(), out.groups.end(), [](const OpGroup& a, const OpGroup& b) {
      if (a.total_ps != b.total_ps) return a.total_ps > b.total_ps;
      if (a.name != b.name) return a.name < b.name;
      if (a.module != b.module) return a.module < b.module;
      return a.program_ids < b.program_ids;
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
