#include "jaxprof/analysis/ops/ops.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <tuple>
#include <unordered_map>

#include "jaxprof/analysis/ops/category.h"
#include "jaxprof/analysis/ops/device_events.h"
#include "jaxprof/analysis/ops/memory_op.h"
#include "jaxprof/analysis/ops/self_time.h"
#include "jaxprof/analysis/partial/extract_partials.h"
#include "jaxprof/analysis/partial/partial_build.h"
#include "jaxprof/analysis/timeline/intervals.h"

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

uint64_t pack(uint32_t hi, uint32_t lo) { return (static_cast<uint64_t>(hi) << 32) | lo; }

// A device's events with one (module, hlo op, metadata), copies and fills by their own evidence
// (memory_op.h) apart from the rest: the finest group.
struct FineKey {
  uint64_t module_op = 0;  // module << 32 | hlo_op
  uint32_t metadata = 0;
  bool memory = false;
  bool operator==(const FineKey&) const = default;
};
struct FineKeyHash {
  size_t operator()(const FineKey& k) const {
    return std::hash<uint64_t>()((k.module_op * 0x9E3779B97F4A7C15ull + k.metadata) * 2 + k.memory);
  }
};

struct FineAcc {
  DurationMoments d;
  int64_t self = 0;
  uint64_t first = 0;
  uint32_t first_event = 0;
};

}  // namespace

OpDescription describe_op_event(const Profile& p, uint32_t plane, uint32_t e, bool memory) {
  OpDescription d;
  const Events& ev = p.events;
  if (ev.hlo_op[e] == 0) {
    d.category = category_name(memory ? OpCategory::kMemcpy : categorize({}, p.event_name(e)));
    return d;
  }
  const ModuleKey& mk = p.modules[ev.module[e]];
  std::optional<OpCategory> from_hlo;
  if (const HloModule* mod = p.hlo.find(hlo_program_key(mk.program_id), p.str(mk.name))) {
    if (const HloInstruction* instr = mod->find(p.str(ev.hlo_op[e]))) {
      d.opcode = std::string(instr->opcode);
      d.op_name = std::string(instr->op_name);
      d.source = mod->source_line(*instr);
      from_hlo = categorize_instruction(*mod, *instr);
    }
  }
  if (d.op_name.empty()) {
    // GPU kernels carry the JAX op path as the tf_op stat; "XlaModule:" is a placeholder.
    if (auto v = p.event_stat(plane, e, "tf_op"); v && v->is_text()) {
      std::string_view op = v->str;
      if (op.ends_with(':')) op.remove_suffix(1);
      if (op.find('/') != std::string_view::npos) d.op_name = std::string(op);
    }
  }
  d.category = category_name(memory     ? OpCategory::kMemcpy
                             : from_hlo ? *from_hlo
                                        : categorize({}, p.event_name(e), d.op_name));
  return d;
}

void extract_op_groups(PartialBuild& b, const EventFilterSpec& spec) {
  const Profile& p = b.p;
  EventFilter filter(spec);
  uint64_t budget = spec.max_events ? spec.max_events : std::numeric_limits<uint64_t>::max();

  // Name filters depend only on the event metadata: decide once per metadata entry.
  std::vector<int8_t> name_ok(p.event_metadata.size(), -1);
  std::vector<uint32_t> needed;
  for (const DeviceLines& dev : b.devices)
    if (filter.keeps_device(dev.name))
      needed.insert(needed.end(), dev.lines.begin(), dev.lines.end());
  p.require_lines(needed);  // one decoding pass for all devices
  const SteadyState& steady = steady_state(p, b.steady);

  for (size_t di = 0; di < b.devices.size(); ++di) {
    const DeviceLines& dev = b.devices[di];
    if (!filter.keeps_device(dev.name)) continue;
    PartialDevice& out = b.device(di);
    HostPartial& host = b.host_of(di);
    const uint32_t host_index = b.where[di].host;

    std::unordered_map<FineKey, FineAcc, FineKeyHash> groups;
    std::vector<Interval> busy;
    int64_t first = std::numeric_limits<int64_t>::max(), last = std::numeric_limits<int64_t>::min();
    std::vector<int64_t> self;
    std::vector<uint8_t> participates;
    FineKey last_key{~uint64_t{0}, 0};
    FineAcc* last_acc = nullptr;

    for (uint32_t li : dev.lines) {
      const Line& line = p.lines[li];
      const Events& ev = p.events;
      uint32_t begin = line.first_event, n = line.event_count;
      if (dev.hlo_ops_only) {
        participates.assign(n, 0);
        for (uint32_t k = 0; k < n; ++k) participates[k] = dev.counts(ev, begin + k);
      }
      compute_op_self_times(ev, line, self, dev.hlo_ops_only ? &participates : nullptr);
      const LineMemoryOps memory_op(p, li);
      const bool maybe_memory = !memory_op.never();
      Interval cur{0, -1};
      for (uint32_t k = 0; k < n; ++k) {
        uint32_t e = begin + k;
        if (!dev.counts(ev, e)) continue;
        if (steady.set_apart(e)) {
          ++out.op_set_apart;
          continue;
        }
        // Placement (the busy union, span) on the timeline; the op's own time on its clock.
        int64_t s = ev.start_ps[e], en = ev.end_ps(e), d = ev.duration_ps[e];
        uint64_t position = out.op_events++;
        if (ev.on_device_clock(line, e)) {
          d = ev.device_duration_ps[e];
          ++out.op_device_clock_events;
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
        if (d < spec.min_duration_ps) continue;
        if (budget == 0) {
          host.op_capped = true;
          continue;
        }
        --budget;
        ++out.op_selected;
        FineKey key{pack(ev.module[e], ev.hlo_op[e]), mi,
                    maybe_memory && memory_op(e) != MemoryOp::kNone};
        if (!(key == last_key) || last_acc == nullptr) {
          auto [it, inserted] = groups.try_emplace(key);
          if (inserted) {
            it->second.first = position;
            it->second.first_event = e;
          }
          last_acc = &it->second;
          last_key = key;
        }
        last_acc->d.add(d);
        last_acc->self += self[k];
      }
      if (cur.end > cur.begin) busy.push_back(cur);
      last_acc = nullptr;  // the map may rehash between lines
    }
    if (out.op_events == 0) continue;
    out.op_busy_ps = union_length(busy);
    out.op_span_ps = last - first;

    // Metadata entries with equal names are one group (copies and fills by their own evidence
    // apart); in first-event order.
    std::vector<std::pair<const FineKey*, const FineAcc*>> sorted;
    for (const auto& [key, acc] : groups) sorted.push_back({&key, &acc});
    std::sort(sorted.begin(), sorted.end(),
              [](const auto& a, const auto& b) { return a.second->first < b.second->first; });
    std::unordered_map<std::string, uint32_t> index;
    for (const auto& [key, acc] : sorted) {
      const EventMetadata& m = p.event_metadata[key->metadata];
      uint32_t module = b.module(host_index, static_cast<uint32_t>(key->module_op >> 32));
      uint32_t hlo_op = host.strings.id(p.str(static_cast<StringId>(key->module_op)));
      uint32_t kernel = host.strings.id(p.str(m.name));
      uint32_t display = host.strings.id(p.str(m.display_name != 0 ? m.display_name : m.name));
      auto [it, added] = index.try_emplace(
          fmt::format("{},{},{},{},{}", module, hlo_op, kernel, display, key->memory ? 1 : 0),
          static_cast<uint32_t>(out.op_groups.size()));
      if (!added) {
        PartialOpGroup& g = out.op_groups[it->second];
        g.duration.merge(acc->d);
        g.self_ps += acc->self;
        continue;
      }
      PartialOpGroup& g = out.op_groups.emplace_back();
      g.module = module;
      g.hlo_op = hlo_op;
      g.kernel = kernel;
      g.display = display;
      g.duration = acc->d;
      g.self_ps = acc->self;
      g.first = acc->first;
      OpDescription d = describe_op_event(p, dev.plane, acc->first_event, key->memory);
      g.opcode = host.strings.id(d.opcode);
      g.op_name = host.strings.id(d.op_name);
      g.source = host.strings.id(d.source);
      g.category = host.strings.id(d.category);
    }
  }
}

namespace {

struct Acc {
  DurationMoments d;
  int64_t self = 0;
  const PartialOpGroup* first = nullptr;  // the representative: the earliest first event
  // Per program the group holds, its earliest group (groups of one name merge programs unless
  // split by program, and then describe each from its own program's HLO).
  std::vector<std::pair<ProgramId, const PartialOpGroup*>> programs;

  void note_program(ProgramId id, const PartialOpGroup* g) {
    for (auto& [pid, rep] : programs)
      if (pid == id) {
        if (g->first < rep->first) rep = g;
        return;
      }
    programs.push_back({id, g});
  }
  void add(const HostPartial& h, const PartialOpGroup& g) {
    d.merge(g.duration);
    self += g.self_ps;
    if (!first || g.first < first->first) first = &g;
    note_program(h.modules[g.module].program_id, &g);
  }
  void merge(const Acc& o) {
    d.merge(o.d);
    self += o.self;
    if (!first || (o.first && o.first->first < first->first)) first = o.first;
    for (const auto& [pid, rep] : o.programs) note_program(pid, rep);
  }
};

void finish(OpGroup& out, const Acc& a, DeviceOps& device) {
  out.count = a.d.count;
  out.total_ps = a.d.sum;
  out.self_ps = a.self;
  out.min_ps = a.d.count ? a.d.min : 0;
  out.max_ps = a.d.count ? a.d.max : 0;
  out.mean_ps = a.d.mean();
  out.std_ps = a.d.std();
  out.share = device.shares(static_cast<double>(a.self), static_cast<double>(device.busy_ps),
                            out.name + " on " + device.device);
}

// An hlo-op group as `ops` describes it, from its representative.
void describe_representative(const HostPartial& h, const Acc& a, OpGroup& g) {
  const PartialOpGroup& r = *a.first;
  g.name = std::string(h.str(r.hlo_op != 0 ? r.hlo_op : r.display));
  g.module = std::string(h.module_name(r.module));
  g.program_id = h.modules[r.module].program_id;
  if (r.hlo_op != 0) {
    g.opcode = h.str(r.opcode);
    g.op_name = h.str(r.op_name);
    g.source = h.str(r.source);
  }
  // Partials written before categories were recorded: only the strings are left.
  g.category = r.category != 0
                   ? std::string(h.str(r.category))
                   : category_name(categorize(g.opcode,
                                              g.opcode.empty() ? std::string_view(h.str(r.kernel))
                                                               : std::string_view(g.name),
                                              g.op_name));
}

// An hlo-op group over every program it holds: each program's fields come from its own HLO, and
// a field the programs disagree on stays unknown (empty).
void describe_hlo_op(const HostPartial& h, const Acc& a, OpGroup& g) {
  describe_representative(h, a, g);
  for (const auto& [pid, rep] : a.programs) g.program_ids.push_back(pid);
  std::sort(g.program_ids.begin(), g.program_ids.end());
  if (a.programs.size() < 2) return;
  g.program_id = kNoProgram;
  bool category_agrees = true;
  for (const auto& [pid, rep] : a.programs) {
    if (h.str(rep->opcode) != g.opcode) g.opcode.clear();
    if (h.str(rep->op_name) != g.op_name) g.op_name.clear();
    if (h.str(rep->source) != g.source) g.source.clear();
    if (rep->category != a.first->category) category_agrees = false;
  }
  // Programs that make one op different things: the name decides, as without the HLO.
  if (!category_agrees)
    g.category = category_name(categorize({}, h.str(a.first->kernel), g.op_name));
}

}  // namespace

void for_each_device_ops(const PartialSet& set, const OpsOptions& options,
                         const std::function<void(DeviceOps&&)>& sink) {
  set.require(kPartOps, "ops");
  set.require_steady(options.steady, "ops");
  EventFilter filter(options.filter);
  set.for_each_device(
      [&](const PartialSet::DeviceRef&, const HostPartial& h, const PartialDevice& dev) {
        if (!filter.keeps_device(dev.name) || dev.op_events == 0) return;
        DeviceOps out;
        out.device = dev.name;
        out.host = h.host;
        out.busy_ps = dev.op_busy_ps;
        out.span_ps = dev.op_span_ps;
        out.events = dev.op_events;
        out.device_clock_events = dev.op_device_clock_events;
        out.set_apart = dev.op_set_apart;

        // Groups keyed by strings, in the order of their first events.
        // hlo-op keys hold the program when split by it; category and opcode groups are unions of
        // hlo-op groups taken one program at a time, so that each is described by its own HLO.
        const bool split = options.by_program || options.group_by == GroupBy::kCategory ||
                           options.group_by == GroupBy::kOpcode;
        std::map<std::tuple<std::string_view, uint8_t, std::string_view, ProgramId>, Acc> by_key;
        std::map<std::pair<std::string_view, ProgramId>, Acc> by_module;
        for (const PartialOpGroup& g : dev.op_groups) {
          if (filter.filters_names() && !filter.keeps_name(h.str(g.display))) continue;
          out.selected += g.duration.count;
          switch (options.group_by) {
            case GroupBy::kKernel:
              by_key[{h.str(g.kernel), 0, {}, kNoProgram}].add(h, g);
              break;
            case GroupBy::kName:
              by_key[{h.str(g.display), 0, {}, kNoProgram}].add(h, g);
              break;
            case GroupBy::kModule:
              by_module[{h.module_name(g.module), h.modules[g.module].program_id}].add(h, g);
              break;
            default:
              // No HLO op: grouped by event name, apart from real op names of the same text.
              by_key[{h.module_name(g.module), g.hlo_op == 0,
                      h.str(g.hlo_op != 0 ? g.hlo_op : g.display),
                      split ? h.modules[g.module].program_id : kNoProgram}]
                  .add(h, g);
          }
        }
        if (options.group_by == GroupBy::kModule) {
          for (const auto& [key, acc] : by_module) {
            OpGroup& g = out.groups.emplace_back();
            g.name = key.first.empty() ? "(no module)" : std::string(key.first);
            g.program_id = key.second;
            finish(g, acc, out);
          }
        } else if (options.group_by == GroupBy::kKernel || options.group_by == GroupBy::kName) {
          for (const auto& [key, acc] : by_key) {
            OpGroup& g = out.groups.emplace_back();
            g.name = std::string(std::get<0>(key));
            finish(g, acc, out);
          }
        } else if (options.group_by == GroupBy::kHloOp) {
          for (const auto& [key, acc] : by_key) {
            OpGroup& g = out.groups.emplace_back();
            describe_hlo_op(h, acc, g);
            finish(g, acc, out);
          }
        } else {
          // Category and opcode are unions of hlo-op groups: describe each op, merge by its label.
          std::map<std::string, Acc> merged;
          for (const auto& [key, acc] : by_key) {
            OpGroup g;
            describe_hlo_op(h, acc, g);
            merged[options.group_by == GroupBy::kOpcode
                       ? (g.opcode.empty() ? std::string(kUnknownOpcode) : g.opcode)
                       : g.category]
                .merge(acc);
          }
          for (const auto& [label, acc] : merged) {
            OpGroup& g = out.groups.emplace_back();
            g.name = label;
            if (options.group_by == GroupBy::kCategory) g.category = g.name;
            if (options.group_by == GroupBy::kOpcode) g.opcode = g.name;
            finish(g, acc, out);
          }
        }
        std::stable_sort(out.groups.begin(), out.groups.end(),
                         [](const OpGroup& a, const OpGroup& b) {
                           if (a.total_ps != b.total_ps) return a.total_ps > b.total_ps;
                           if (a.name != b.name) return a.name < b.name;
                           if (a.module != b.module) return a.module < b.module;
                           return a.program_ids < b.program_ids;
                         });
        out.groups_total = out.groups.size();
        if (options.top > 0 && out.groups.size() > options.top) out.groups.resize(options.top);
        sink(std::move(out));
      },
      kPartOps);
}

OpsResult ops_from_partials(const PartialSet& set, const OpsOptions& options) {
  OpsResult result;
  result.group_by = options.group_by;
  ShareGuard shares;
  for_each_device_ops(set, options, [&](DeviceOps&& d) {
    shares.merge(d.shares);
    result.devices.push_back(std::move(d));
  });
  if (shares.clipped()) result.warnings.push_back(shares.warning("its device's busy time"));
  for (const HostPartial& h : set.heads())
    if (h.op_capped) {
      result.warnings.push_back(
          fmt::format("stopped at --max-events {}: later events are not counted in the groups",
                      options.filter.max_events));
      break;
    }
  return result;
}

OpsResult compute_ops(const Profile& p, const OpsOptions& options) {
  EventFilter check(options.filter);  // a bad regex is reported before anything is read
  PartialExtractOptions extract;
  extract.parts = kPartOps;
  extract.op_filter = options.filter;
  extract.steady = options.steady;
  return ops_from_partials(PartialSet(extract_partials(p, extract)), options);
}

}  // namespace jaxprof
