#include "jaxprof/analysis/collectives/collectives.h"

#include <algorithm>
#include <charconv>
#include <deque>
#include <limits>
#include <map>
#include <stdexcept>
#include <tuple>
#include <unordered_map>

#include "jaxprof/analysis/ops/category.h"
#include "jaxprof/analysis/ops/device_events.h"
#include "jaxprof/analysis/ops/event_category.h"
#include "jaxprof/analysis/ops/memory_op.h"
#include "jaxprof/analysis/partial/extract_partials.h"
#include "jaxprof/analysis/partial/partial_build.h"
#include "jaxprof/analysis/timeline/intervals.h"
#include "jaxprof/common/warning_kind.h"

namespace jaxprof {

CollectiveTraits collective_traits(std::string_view op, int64_t n) {
  CollectiveTraits t;
  const double frac = n > 0 ? static_cast<double>(n - 1) / static_cast<double>(n) : 1.0;
  if (op == "all-reduce") {
    t.bus_factor = 2 * frac;
  } else if (op == "all-gather") {
    // The operand is one shard; the data every device ends up with is N of them.
    t.size_correction = n > 0 ? static_cast<double>(n) : 1.0;
    t.bus_factor = frac;
  } else if (op == "reduce-scatter" || op == "all-to-all" || op == "ragged-all-to-all") {
    // reduce-scatter's operand already is the full N-shard buffer: no correction.
    t.bus_factor = frac;
  }
  return t;
}

namespace {

enum class Phase : uint8_t { kSync, kStart, kDone, kUpdate };

// What an HLO op event is, as far as collectives go.
struct OpInfo {
  bool collective = false;
  bool compute = false;  // counts as compute when hiding communication
  Phase phase = Phase::kSync;
  bool async = false;
  std::string opcode;     // base opcode
  std::string pair_name;  // the op that names the operation: the start op of a pair
  uint64_t bytes = 0;
  std::string shapes;
  const std::vector<std::vector<int64_t>>* groups = nullptr;
};

const HloInstruction* by_id(const HloModule& m, int64_t id) {
  auto it = m.instruction_by_id.find(id);
  return it == m.instruction_by_id.end() ? nullptr : &m.instructions[it->second];
}

// The collective an async-start wraps (XLA wraps reduce-scatter, all-to-all, ... this way).
const HloInstruction* wrapped_collective(const HloModule& m, const HloInstruction& start) {
  for (int64_t cid : start.called_computation_ids) {
    auto it = m.computation_by_id.find(cid);
    if (it == m.computation_by_id.end()) continue;
    for (uint32_t ii : m.computations[it->second].instructions)
      if (!collective_base_opcode(m.instructions[ii].opcode).empty()) return &m.instructions[ii];
  }
  return nullptr;
}

void set_size(const HloModule& m, const HloInstruction& op, std::string_view base, OpInfo& info) {
  // Permutes may carry in-place output buffers and offsets after the input: count the input only.
  size_t n = op.operand_ids.size();
  if (base == "collective-permute" || base == "ragged-all-to-all") n = std::min<size_t>(n, 1);
  for (size_t i = 0; i < n; ++i) {
    const HloInstruction* operand = by_id(m, op.operand_ids[i]);
    if (!operand) continue;
    info.bytes += operand->shape.byte_size();
    if (!info.shapes.empty()) info.shapes += ", ";
    info.shapes += operand->shape.to_string();
  }
}

// Resolves from the HLO instruction; false when it is not a collective.
bool resolve_hlo(const HloModule& m, const HloInstruction& instr, OpInfo& info, int depth = 0) {
  if (depth > 8) return false;
  std::string_view op = instr.opcode;
  std::string_view base = collective_base_opcode(op);
  if (!base.empty()) {
    info.opcode = std::string(base);
    if (op.ends_with("-done")) {
      const HloInstruction* start =
          instr.operand_ids.empty() ? nullptr : by_id(m, instr.operand_ids[0]);
      if (!start || !resolve_hlo(m, *start, info, depth + 1)) {
        info.pair_name = std::string(instr.name);  // a done whose start is unknown stands alone
        info.groups = &instr.replica_groups;
      }
      info.phase = Phase::kDone;
      info.async = true;
      return true;
    }
    info.phase = op.ends_with("-start") ? Phase::kStart : Phase::kSync;
    info.async = info.phase == Phase::kStart;
    info.pair_name = std::string(instr.name);
    info.groups = &instr.replica_groups;
    set_size(m, instr, base, info);
    return true;
  }
  if (op == "async-start") {
    const HloInstruction* inner = wrapped_collective(m, instr);
    if (!inner) return false;
    info.opcode = std::string(collective_base_opcode(inner->opcode));
    info.phase = Phase::kStart;
    info.async = true;
    info.pair_name = std::string(instr.name);
    info.groups = &inner->replica_groups;
    set_size(m, instr, info.opcode, info);
    return true;
  }
  if (op == "async-update" || op == "async-done") {
    const HloInstruction* prev =
        instr.operand_ids.empty() ? nullptr : by_id(m, instr.operand_ids[0]);
    if (!prev || !resolve_hlo(m, *prev, info, depth + 1)) return false;
    info.phase = op == "async-done" ? Phase::kDone : Phase::kUpdate;
    return true;
  }
  return false;
}

// Without HLO: the op name says what it is ("all-reduce.5", "all-gather-start.2").
bool resolve_name(std::string_view name, OpInfo& info) {
  std::string_view stem = name.substr(0, name.find('.'));
  std::string_view base = collective_base_opcode(stem);
  if (base.empty()) return false;
  info.opcode = std::string(base);
  info.phase = stem.ends_with("-start")  ? Phase::kStart
               : stem.ends_with("-done") ? Phase::kDone
                                         : Phase::kSync;
  info.async = info.phase != Phase::kSync;
  // Unknown pairing: a done closes the oldest open start of the same collective.
  info.pair_name = info.async ? "?" + info.opcode : std::string(name);
  return true;
}

// Length of [b, e) covered by `merged` (sorted, disjoint).
int64_t covered(const std::vector<Interval>& merged, int64_t b, int64_t e) {
  auto it = std::upper_bound(merged.begin(), merged.end(), b,
                             [](int64_t v, const Interval& i) { return v < i.end; });
  int64_t total = 0;
  for (; it != merged.end() && it->begin < e; ++it)
    total += std::min(e, it->end) - std::max(b, it->begin);
  return total;
}

// The number at the end of a device name ("/device:CPU:3" -> 3), -1 if none.
int64_t device_number(std::string_view name) {
  size_t colon = name.rfind(':');
  if (colon == std::string_view::npos) return -1;
  int64_t v = -1;
  auto [p, ec] = std::from_chars(name.data() + colon + 1, name.data() + name.size(), v);
  return ec == std::errc() && p == name.data() + name.size() ? v : -1;
}

double gbps(double bytes, int64_t ps) {
  return ps > 0 ? bytes * 1000.0 / static_cast<double>(ps) : 0;
}

}  // namespace

void extract_collectives(PartialBuild& b, const std::string& device_filter) {
  const Profile& p = b.p;
  EventFilter filter(EventFilterSpec{.device = device_filter});
  std::vector<uint32_t> needed;
  for (const DeviceLines& d : b.devices)
    if (filter.keeps_device(d.name)) needed.insert(needed.end(), d.lines.begin(), d.lines.end());
  p.require_lines(needed);
  const SteadyState& steady = steady_state(p, b.steady);

  const Events& ev = p.events;
  std::unordered_map<uint64_t, OpInfo> info_cache;
  // Most metadata entries come with one (hlo op, module): the first one's info is kept per entry,
  // which spares a hash lookup per event (the map's values do not move).
  struct First {
    StringId hlo_op = 0;
    uint32_t module = 0;
    const OpInfo* info = nullptr;
  };
  std::vector<First> first_of(p.event_metadata.size());
  auto classify = [&](uint32_t e) -> const OpInfo& {
    First& f = first_of[ev.metadata[e]];
    if (f.info && f.hlo_op == ev.hlo_op[e] && f.module == ev.module[e]) return *f.info;
    uint64_t key = ev.hlo_op[e] != 0 ? (uint64_t{ev.module[e]} << 32) | ev.hlo_op[e]
                                     : (uint64_t{1} << 63) | ev.metadata[e];
    auto [it, inserted] = info_cache.try_emplace(key);
    if (!f.info) f = {ev.hlo_op[e], ev.module[e], &it->second};
    if (!inserted) return it->second;
    OpInfo& info = it->second;
    std::string_view name = ev.hlo_op[e] != 0 ? p.str(ev.hlo_op[e]) : p.event_name(e);
    const ModuleKey& mk = p.modules[ev.module[e]];
    const HloModule* m = p.hlo.find(hlo_program_key(mk.program_id), p.str(mk.name));
    const HloInstruction* instr = m && ev.hlo_op[e] != 0 ? m->find(name) : nullptr;
    if (instr) {
      info.collective = resolve_hlo(*m, *instr, info);
    } else if (ev.hlo_op[e] != 0) {
      info.collective = resolve_name(name, info);
    }
    if (!info.collective) {
      OpCategory c = instr ? categorize_instruction(*m, *instr) : categorize({}, p.event_name(e));
      info.compute = c != OpCategory::kCollective && c != OpCategory::kMemcpy;
    }
    return info;
  };
  const StringId run_id_name[] = {p.strings.find("run_id")};

  for (size_t di = 0; di < b.devices.size(); ++di) {
    const DeviceLines& dev = b.devices[di];
    if (!filter.keeps_device(dev.name)) continue;
    PartialDevice& out = b.device(di);
    HostPartial& h = b.host_of(di);
    const uint32_t host = b.where[di].host;
    const int64_t shift = b.device_shift_ps(di);
    std::vector<Interval> compute, of_line;
    std::vector<uint32_t> coll;
    for (uint32_t li : dev.lines) {
      const Line& line = p.lines[li];
      // A line is sorted by start: its compute intervals merge as they come.
      of_line.clear();
      const LineMemoryOps memory_op(p, li);  // copies and fills hide no communication
      const bool maybe_memory = !memory_op.never();
      for (uint32_t e = line.first_event; e < line.first_event + line.event_count; ++e) {
        if (!dev.counts(ev, e) || steady.set_apart(e)) continue;
        const OpInfo& info = classify(e);
        if (info.collective) {
          coll.push_back(e);
        } else if (info.compute && !(maybe_memory && memory_op(e) != MemoryOp::kNone)) {
          append_merged(of_line, ev.start_ps[e], ev.end_ps(e));
        }
      }
      compute.insert(compute.end(), of_line.begin(), of_line.end());
    }
    merge_intervals(compute);  // the lines' runs
    std::stable_sort(coll.begin(), coll.end(),
                     [&](uint32_t a, uint32_t b) { return ev.start_ps[a] < ev.start_ps[b]; });

    std::map<std::pair<uint32_t, std::string>, uint32_t> op_index;  // (module, pair name) -> op
    const int64_t number = device_number(dev.name);
    auto op_of = [&](uint32_t e, const OpInfo& info) {
      auto key = std::make_pair(ev.module[e], info.pair_name);
      auto [it, inserted] =
          op_index.try_emplace(key, static_cast<uint32_t>(out.collective_ops.size()));
      if (inserted) {
        PartialCollectiveOp& op = out.collective_ops.emplace_back();
        op.module = b.module(host, ev.module[e]);
        op.name = h.strings.id(info.pair_name);
        op.opcode = h.strings.id(info.opcode);
        op.async = info.async;
        op.message_bytes = info.bytes;
        op.shapes = h.strings.id(info.shapes);
        if (info.groups) {
          op.groups = static_cast<uint32_t>(info.groups->size());
          if (!info.groups->empty())
            op.group_size = static_cast<int64_t>(info.groups->front().size());
          for (size_t g = 0; g < info.groups->size() && op.device_group < 0; ++g)
            for (int64_t id : (*info.groups)[g])
              if (id == number) op.device_group = static_cast<int64_t>(g);
        }
      }
      return it->second;
    };
    // From `first` (the start, or only, event) to `last` (its done): the duration on the device
    // clock where both carry it, else the timeline's.
    auto add = [&](uint32_t op, uint32_t first, uint32_t last, int64_t begin, int64_t end) {
      PartialCollectiveExecution& x = out.collective_executions.emplace_back();
      x.op = op;
      x.begin_ps = begin - shift;
      x.end_ps = end - shift;
      x.duration_ps = end - begin;
      if (p.on_device_clock(first) && p.on_device_clock(last))
        x.duration_ps = std::max(ev.device_start_ps[last] + ev.device_duration_ps[last],
                                 ev.device_start_ps[first] + ev.device_duration_ps[first]) -
                        ev.device_start_ps[first];
      // Exposure is placement on the timeline; never more than the duration it is part of.
      x.exposed_ps = std::min(x.duration_ps, (end - begin) - covered(compute, begin, end));
      std::optional<StatValue> run_id[1];
      p.find_event_stats(dev.plane, first, run_id_name, run_id);
      if (const auto& v = run_id[0]) x.run_id = v->as_int();
    };
    // Async pairs: a done closes the oldest open start of its start op on this device.
    std::map<uint32_t, std::deque<uint32_t>> open;
    for (uint32_t e : coll) {
      const OpInfo& info = classify(e);
      uint32_t op = op_of(e, info);
      switch (info.phase) {
        case Phase::kSync:
          add(op, e, e, ev.start_ps[e], ev.end_ps(e));
          break;
        case Phase::kStart:
          open[op].push_back(e);
          break;
        case Phase::kUpdate:
          break;  // inside its start..done interval
        case Phase::kDone: {
          std::deque<uint32_t>& q = open[op];
          if (q.empty()) {
            add(op, e, e, ev.start_ps[e], ev.end_ps(e));  // its start is before the trace
          } else {
            uint32_t s = q.front();
            q.pop_front();
            add(op, s, e, ev.start_ps[s], std::max(ev.end_ps(e), ev.end_ps(s)));
          }
          break;
        }
      }
    }
    // Starts without a done: GPUs run the transfer as the start's kernel and record no done.
    for (auto& [op, q] : open)
      for (uint32_t s : q) add(op, s, s, ev.start_ps[s], ev.end_ps(s));
  }
}

namespace {

// One collective op (module, program, the op that names it) over the devices, described as the
// first device that lists it describes it.
struct OpAcc {
  std::string module, pair_name, opcode, shapes;
  ProgramId program_id = kNoProgram;
  bool async = false;
  uint64_t message_bytes = 0;
  int64_t group_size = 0;
  uint32_t groups = 0;
  // Over the devices that ran it (first pass).
  uint32_t devices = 0;
  bool run_ids = true;        // every device ran it under the same run_ids, all known
  bool have_runs = false;     // `runs` holds the first such device's
  std::vector<int64_t> runs;  // distinct, ascending
  bool groups_known = true;   // every device that ran it holds a replica group in the HLO
  // Its statistics and instances (second pass).
  CollectiveOp out;
  struct Instance {
    uint32_t devices = 0;
    int64_t first = std::numeric_limits<int64_t>::max(), last = 0;
    int64_t fastest = std::numeric_limits<int64_t>::max(), latest_start = -1;
    uint32_t late_device = 0;
    // With members: (device, begin, end, duration).
    std::vector<std::tuple<uint32_t, int64_t, int64_t, int64_t>> members;
  };
  using InstanceKey = std::tuple<int64_t, uint64_t, int64_t>;  // (run, index, group)
  std::map<InstanceKey, Instance> instances;
};

// The collective ops of the set, one per (module, program, op that names it), in the order the
// devices first list them; and where the ops of the device at hand are among them.
class OpTable {
 public:
  std::vector<OpAcc> ops;
  // The device's ops as indices into `ops`, and its replica group in each op's HLO (where a
  // device lists two ops that are one op of the set, the later one's).
  std::vector<uint32_t> global;
  std::map<uint32_t, int64_t> group_of;

  // Maps the device's ops into `ops`: the first pass over the hosts adds them, the second finds
  // them all there.
  void index_device(const HostPartial& h, const PartialDevice& dev, bool first_pass) {
    global.assign(dev.collective_ops.size(), 0);
    group_of.clear();
    for (size_t k = 0; k < dev.collective_ops.size(); ++k) {
      const PartialCollectiveOp& op = dev.collective_ops[k];
      auto [it, added] =
          index_.try_emplace({std::string(h.module_name(op.module)),
                              h.modules[op.module].program_id, std::string(h.str(op.name))},
                             static_cast<uint32_t>(ops.size()));
      if (added) {
        if (!first_pass) throw std::logic_error("collectives: hosts changed between passes");
        OpAcc& a = ops.emplace_back();
        a.module = std::get<0>(it->first);
        a.program_id = std::get<1>(it->first);
        a.pair_name = std::get<2>(it->first);
        a.opcode = h.str(op.opcode);
        a.shapes = h.str(op.shapes);
        a.async = op.async;
        a.message_bytes = op.message_bytes;
        a.group_size = op.group_size;
        a.groups = op.groups;
      }
      global[k] = it->second;
      group_of[it->second] = op.device_group;
    }
  }

 private:
  std::map<std::tuple<std::string, ProgramId, std::string>, uint32_t> index_;
};

// The devices the filter keeps, numbered in the order the set lists them.
struct KeptDevices {
  std::vector<uint32_t> host;  // the host's index in the set
  std::vector<std::string> name;
};

// The hosts are read twice, one at a time: first what decides how executions on different
// devices are matched (run_ids, replica groups), then the executions themselves, each folded
// into its instance as it comes, so that no list of every device's executions is kept.
//
// The first pass: which ops each device runs and under which run_ids; a row per device.
void survey_devices(const PartialSet& set, const EventFilter& filter, OpTable& table,
                    KeptDevices& kept, CollectivesResult& result) {
  std::vector<OpAcc>& ops = table.ops;
  set.for_each_device(
      [&](const PartialSet::DeviceRef& ref, const HostPartial& h, const PartialDevice& dev) {
        if (!filter.keeps_device(dev.name)) return;
        kept.host.push_back(ref.host);
        kept.name.push_back(dev.name);
        CollectiveDevice& out = result.devices.emplace_back();
        out.device = dev.name;
        out.host = h.host;
        table.index_device(h, dev, true);
        std::map<uint32_t, std::vector<int64_t>> runs;  // op -> this device's run_ids
        for (const PartialCollectiveExecution& x : dev.collective_executions) {
          OpAcc& a = ops[table.global[x.op]];
          std::vector<int64_t>& r = runs[table.global[x.op]];
          a.run_ids &= x.run_id.has_value();
          r.push_back(x.run_id.value_or(0));
        }
        for (auto& [oi, r] : runs) {
          OpAcc& a = ops[oi];
          ++a.devices;
          a.groups_known &= table.group_of[oi] >= 0;
          std::sort(r.begin(), r.end());
          r.erase(std::unique(r.begin(), r.end()), r.end());
          if (!a.have_runs) {
            a.runs = std::move(r);
            a.have_runs = true;
          } else {
            a.run_ids &= a.runs == r;
          }
        }
      },
      kPartCollectives);
}

// Each op's row of the result as far as the first pass tells it; the second fills its figures.
void start_op_rows(std::vector<OpAcc>& ops) {
  for (OpAcc& a : ops) {
    std::vector<int64_t>().swap(a.runs);
    CollectiveOp& out = a.out;
    out.module = a.module;
    out.program_id = a.program_id;
    out.opcode = a.opcode;
    out.name = a.pair_name.starts_with("?") ? out.opcode : a.pair_name;
    out.async = a.async;
    out.message_bytes = a.message_bytes;
    out.operand_shapes = a.shapes;
    out.devices = a.devices;
    if (a.group_size > 0) {
      out.group_size = a.group_size;
    } else {
      out.group_size = out.devices;
      out.group_size_from_devices = true;
    }
    out.traits = collective_traits(out.opcode, out.group_size);
    out.min_ps = std::numeric_limits<int64_t>::max();
    out.max_ps = 0;
  }
}

// The second pass: each execution counts in its op's and its device's figures and joins its
// instance.
void fold_executions(const PartialSet& set, const EventFilter& filter, bool members, OpTable& table,
                     CollectivesResult& result) {
  std::vector<OpAcc>& ops = table.ops;
  // Replica groups name devices by global id; on one host that is the device's number.
  const bool single_host = set.size() <= 1;
  uint32_t di = 0;
  set.for_each_device(
      [&](const PartialSet::DeviceRef& ref, const HostPartial& h, const PartialDevice& dev) {
        if (!filter.keeps_device(dev.name)) return;
        table.index_device(h, dev, false);
        const int64_t shift = set.shift_ps(ref.host);
        // The device's executions of each op by start, numbered per run_id where the op's devices
        // agree on them: the n-th execution on every device is one instance.
        std::vector<uint32_t> order(dev.collective_executions.size());
        for (uint32_t k = 0; k < order.size(); ++k) order[k] = k;
        std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
          const auto &x = dev.collective_executions[a], &y = dev.collective_executions[b];
          return x.begin_ps != y.begin_ps ? x.begin_ps < y.begin_ps : a < b;
        });
        std::map<std::pair<uint32_t, int64_t>, uint64_t> counter;
        CollectiveDevice& cd = result.devices[di];
        for (uint32_t k : order) {
          const PartialCollectiveExecution& x = dev.collective_executions[k];
          const uint32_t oi = table.global[x.op];
          OpAcc& a = ops[oi];
          CollectiveOp& out = a.out;
          const int64_t run = a.run_ids ? x.run_id.value_or(0) : 0;
          const auto index = static_cast<uint32_t>(counter[{oi, run}]++);
          const bool split = single_host && a.groups > 1 && a.groups_known;
          const int64_t group = split ? table.group_of[oi] : 0;
          const int64_t begin = x.begin_ps + shift, end = x.end_ps + shift, d = x.duration_ps;
          ++out.count;
          out.total_ps += d;
          out.min_ps = std::min(out.min_ps, d);
          out.max_ps = std::max(out.max_ps, d);
          out.exposed_ps += x.exposed_ps;
          ++cd.executions;
          cd.total_ps += d;
          cd.exposed_ps += x.exposed_ps;
          OpAcc::Instance& in = a.instances[{run, index, group}];
          ++in.devices;
          in.first = std::min(in.first, begin);
          in.last = std::max(in.last, end);
          in.fastest = std::min(in.fastest, d);
          // Devices come in order, one execution each: the first to start last is kept.
          if (begin > in.latest_start) {
            in.latest_start = begin;
            in.late_device = di;
          }
          if (members) in.members.emplace_back(di, begin, end, d);
        }
        ++di;
      },
      kPartCollectives);
}

// One instance of an op as a row of the result, its members as the executions ran.
void add_instance_row(const CollectiveOp& op, bool has_run_id, const OpAcc::InstanceKey& key,
                      OpAcc::Instance& in, int64_t wait, const KeptDevices& kept,
                      CollectivesResult& result) {
  CollectiveInstance& inst = result.instances.emplace_back();
  inst.module = op.module;
  inst.name = op.name;
  inst.run_id = std::get<0>(key);
  inst.has_run_id = has_run_id;
  inst.index = std::get<1>(key);
  inst.devices = in.devices;
  inst.first_start_ps = in.first;
  inst.last_end_ps = in.last;
  inst.fastest_ps = in.fastest;
  inst.wait_ps = wait;
  if (in.devices > 1) inst.late_device = kept.name[in.late_device];
  // As the executions ran: by start, then device.
  std::sort(in.members.begin(), in.members.end(), [](const auto& x, const auto& y) {
    return std::get<1>(x) != std::get<1>(y) ? std::get<1>(x) < std::get<1>(y)
                                            : std::get<0>(x) < std::get<0>(y);
  });
  for (const auto& [dev, begin, end, duration] : in.members)
    inst.members.push_back({kept.host[dev], dev, begin, end, duration});
}

// Each op's mean and bandwidth, and over its instances the wait for the last device to arrive
// and the device most often last; the ops move into the result. `device_late` counts, per kept
// device, the instances it was last to.
void close_ops(std::vector<OpAcc>& ops, bool instances, const KeptDevices& kept,
               std::vector<uint64_t>& device_late, CollectivesResult& result) {
  for (OpAcc& a : ops) {
    CollectiveOp& out = a.out;
    if (out.count == 0) out.min_ps = 0;
    out.hidden_ps = out.total_ps - out.exposed_ps;
    out.mean_ps =
        out.count ? static_cast<double>(out.total_ps) / static_cast<double>(out.count) : 0;
    double moved = out.traits.size_correction * static_cast<double>(out.message_bytes) *
                   static_cast<double>(out.count);
    out.algbw_gbps = gbps(moved, out.total_ps);
    out.busbw_gbps = out.algbw_gbps * out.traits.bus_factor;

    std::map<uint32_t, uint64_t> late;
    for (auto& [key, in] : a.instances) {
      ++out.instances;
      int64_t wait = in.devices > 1 ? std::max<int64_t>(0, in.last - in.first - in.fastest) : 0;
      if (in.devices > 1) {
        ++out.multi_device_instances;
        ++late[in.late_device];
        ++device_late[in.late_device];
      }
      out.wait_total_ps += wait;
      out.wait_max_ps = std::max(out.wait_max_ps, wait);
      if (instances) add_instance_row(out, a.run_ids, key, in, wait, kept, result);
    }
    decltype(a.instances)().swap(a.instances);
    for (auto& [d, n] : late) {
      if (n > out.late_count) {
        out.late_count = n;
        out.late_device = kept.name[d];
      }
    }
    result.multi_device_instances += out.multi_device_instances;
    result.ops.push_back(std::move(out));
  }
}

// Each device's count of instances it was last to, the device most often last; the devices
// that ran no collective leave the result.
void close_devices(const std::vector<uint64_t>& device_late, const KeptDevices& kept,
                   CollectivesResult& result) {
  for (uint32_t d = 0; d < result.devices.size(); ++d) {
    result.devices[d].late_count = device_late[d];
    if (device_late[d] > result.most_late_count) {
      result.most_late_count = device_late[d];
      result.most_late_device = kept.name[d];
    }
  }
  // Members name their device by its index: renumbered to the devices that stay.
  std::vector<uint32_t> renumbered(result.devices.size());
  uint32_t kept_devices = 0;
  for (uint32_t d = 0; d < result.devices.size(); ++d)
    renumbered[d] = result.devices[d].executions ? kept_devices++ : 0;
  for (CollectiveInstance& inst : result.instances)
    for (CollectiveInstance::Member& m : inst.members) m.device = renumbered[m.device];
  std::erase_if(result.devices, [](const CollectiveDevice& d) { return d.executions == 0; });
}

// The ops summed per (collective, N, size), with their bandwidth.
void add_sizes(CollectivesResult& result) {
  std::map<std::tuple<std::string, int64_t, uint64_t>, CollectiveSize> sizes;
  for (const CollectiveOp& op : result.ops) {
    CollectiveSize& s = sizes[{op.opcode, op.group_size, op.message_bytes}];
    s.opcode = op.opcode;
    s.group_size = op.group_size;
    s.message_bytes = op.message_bytes;
    s.traits = op.traits;
    ++s.ops;
    s.count += op.count;
    s.total_ps += op.total_ps;
    s.exposed_ps += op.exposed_ps;
    s.wait_total_ps += op.wait_total_ps;
  }
  for (auto& [key, s] : sizes) {
    s.hidden_ps = s.total_ps - s.exposed_ps;
    s.mean_ps = s.count ? static_cast<double>(s.total_ps) / static_cast<double>(s.count) : 0;
    s.algbw_gbps = gbps(s.traits.size_correction * static_cast<double>(s.message_bytes) *
                            static_cast<double>(s.count),
                        s.total_ps);
    s.busbw_gbps = s.algbw_gbps * s.traits.bus_factor;
    result.sizes.push_back(s);
  }
}

// Ops and sizes by time, the largest ops kept, instances as they started; a warning per kept op
// without a message size.
void order_rows(const CollectivesOptions& options, CollectivesResult& result) {
  auto by_time = [](const auto& a, const auto& b) { return a.total_ps > b.total_ps; };
  std::stable_sort(result.ops.begin(), result.ops.end(), by_time);
  std::stable_sort(result.sizes.begin(), result.sizes.end(), by_time);
  result.ops_total = result.ops.size();
  if (options.top > 0 && result.ops.size() > options.top) result.ops.resize(options.top);
  std::stable_sort(result.instances.begin(), result.instances.end(),
                   [](const CollectiveInstance& a, const CollectiveInstance& b) {
                     return a.first_start_ps < b.first_start_ps;
                   });
  for (const CollectiveOp& op : result.ops)
    if (op.message_bytes == 0 && op.count > 0) {
      result.warnings.push_back(kNoHloForCollective.text(op.module, op.name));
    }
}

}  // namespace

CollectivesResult collectives_from_partials(const PartialSet& set,
                                            const CollectivesOptions& options) {
  set.require(kPartCollectives, "collectives");
  set.require_steady(options.steady, "collectives");
  EventFilter filter(options.filter);
  CollectivesResult result;
  OpTable table;
  KeptDevices kept;
  survey_devices(set, filter, table, kept, result);
  start_op_rows(table.ops);
  fold_executions(set, filter, options.members, table, result);
  std::vector<uint64_t> device_late(result.devices.size(), 0);
  close_ops(table.ops, options.instances, kept, device_late, result);
  close_devices(device_late, kept, result);
  add_sizes(result);
  order_rows(options, result);
  return result;
}

CollectivesResult compute_collectives(const Profile& p, const CollectivesOptions& options) {
  EventFilter check(options.filter);  // a bad regex is reported before anything is read
  PartialExtractOptions extract;
  extract.parts = kPartCollectives;
  extract.device = options.filter.device;
  extract.steady = options.steady;
  return collectives_from_partials(PartialSet(extract_partials(p, extract)), options);
}

}  // namespace jaxprof
