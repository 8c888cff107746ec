#include "jaxprof/analysis/collectives.h"

#include <algorithm>
#include <charconv>
#include <deque>
#include <limits>
#include <map>
#include <set>
#include <unordered_map>

#include "jaxprof/analysis/category.h"
#include "jaxprof/analysis/device_events.h"
#include "jaxprof/analysis/intervals.h"

namespace jaxprof {

std::string_view collective_base_opcode(std::string_view op) {
  for (std::string_view suffix : {"-start", "-done"})
    if (op.ends_with(suffix)) op.remove_suffix(suffix.size());
  static constexpr std::string_view kOps[] = {
      "all-reduce",        "all-gather",         "reduce-scatter",      "all-to-all",
      "ragged-all-to-all", "collective-permute", "collective-broadcast"};
  for (std::string_view k : kOps)
    if (op == k) return k;
  return {};
}

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

struct Exec {
  uint32_t device = 0;
  uint32_t op = 0;
  uint32_t plane = 0;
  uint32_t event = 0;  // the start (or only) event
  int64_t begin = 0, end = 0, exposed = 0;
  int64_t run_id = 0;
  bool has_run_id = false;
  uint64_t index = 0;
};

struct OpAcc {
  OpInfo info;
  uint32_t module = 0;
  std::string module_name;
  std::set<uint32_t> devices;
  std::vector<uint32_t> execs;
};

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

CollectivesResult compute_collectives(const Profile& p, const CollectivesOptions& options) {
  EventFilter filter(options.filter);
  CollectivesResult result;
  std::vector<DeviceLines> devices = op_devices(p);
  std::erase_if(devices, [&](const DeviceLines& d) { return !filter.keeps_device(d.name); });
  std::vector<uint32_t> needed;
  for (const DeviceLines& d : devices) needed.insert(needed.end(), d.lines.begin(), d.lines.end());
  p.require_lines(needed);
  const SteadyState& steady = steady_state(p, options.steady);

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
      OpCategory c =
          instr ? categorize(instr->opcode, name, instr->op_name) : categorize({}, p.event_name(e));
      info.compute = c != OpCategory::kCollective && c != OpCategory::kMemcpy;
    }
    return info;
  };

  std::map<std::pair<uint32_t, std::string>, uint32_t> op_index;  // (module, pair name) -> op
  std::vector<OpAcc> ops;
  std::vector<Exec> execs;

  for (uint32_t di = 0; di < devices.size(); ++di) {
    const DeviceLines& dev = devices[di];
    CollectiveDevice& out = result.devices.emplace_back();
    out.device = dev.name;
    out.host = p.hosts[p.planes[dev.plane].host].name;
    std::vector<Interval> compute, of_line;
    std::vector<uint32_t> coll;
    for (uint32_t li : dev.lines) {
      const Line& line = p.lines[li];
      // A line is sorted by start: its compute intervals merge as they come.
      of_line.clear();
      for (uint32_t e = line.first_event; e < line.first_event + line.event_count; ++e) {
        if (!dev.counts(ev, e) || steady.set_apart(e)) continue;
        const OpInfo& info = classify(e);
        if (info.collective) {
          coll.push_back(e);
        } else if (info.compute) {
          append_merged(of_line, ev.start_ps[e], ev.end_ps(e));
        }
      }
      compute.insert(compute.end(), of_line.begin(), of_line.end());
    }
    merge_intervals(compute);  // the lines' runs
    std::stable_sort(coll.begin(), coll.end(),
                     [&](uint32_t a, uint32_t b) { return ev.start_ps[a] < ev.start_ps[b]; });

    auto op_of = [&](uint32_t e, const OpInfo& info) {
      auto key = std::make_pair(ev.module[e], info.pair_name);
      auto [it, inserted] = op_index.try_emplace(key, static_cast<uint32_t>(ops.size()));
      if (inserted) {
        OpAcc& acc = ops.emplace_back();
        acc.info = info;
        acc.module = ev.module[e];
        const ModuleKey& mk = p.modules[ev.module[e]];
        acc.module_name = mk.name ? std::string(p.str(mk.name)) : std::string();
      }
      return it->second;
    };
    const StringId run_id_name[] = {p.strings.find("run_id")};
    auto add = [&](uint32_t op, uint32_t first, int64_t begin, int64_t end) {
      Exec x;
      x.device = di;
      x.op = op;
      x.plane = dev.plane;
      x.event = first;
      x.begin = begin;
      x.end = end;
      x.exposed = (end - begin) - covered(compute, begin, end);
      std::optional<StatValue> run_id[1];
      p.find_event_stats(dev.plane, first, run_id_name, run_id);
      if (const auto& v = run_id[0]) {
        if (auto id = v->as_int()) {
          x.run_id = *id;
          x.has_run_id = true;
        }
      }
      ops[op].devices.insert(di);
      execs.push_back(x);
    };
    // Async pairs: a done closes the oldest open start of its start op on this device.
    std::map<uint32_t, std::deque<uint32_t>> open;
    for (uint32_t e : coll) {
      const OpInfo& info = classify(e);
      uint32_t op = op_of(e, info);
      switch (info.phase) {
        case Phase::kSync:
          add(op, e, ev.start_ps[e], ev.end_ps(e));
          break;
        case Phase::kStart:
          open[op].push_back(e);
          break;
        case Phase::kUpdate:
          break;  // inside its start..done interval
        case Phase::kDone: {
          std::deque<uint32_t>& q = open[op];
          if (q.empty()) {
            add(op, e, ev.start_ps[e], ev.end_ps(e));  // its start is before the trace
          } else {
            uint32_t s = q.front();
            q.pop_front();
            add(op, s, ev.start_ps[s], std::max(ev.end_ps(e), ev.end_ps(s)));
          }
          break;
        }
      }
    }
    // Starts without a done: GPUs run the transfer as the start's kernel and record no done.
    for (auto& [op, q] : open)
      for (uint32_t s : q) add(op, s, ev.start_ps[s], ev.end_ps(s));
  }
  std::sort(execs.begin(), execs.end(), [](const Exec& a, const Exec& b) {
    if (a.begin != b.begin) return a.begin < b.begin;
    return a.device < b.device;
  });
  for (uint32_t i = 0; i < execs.size(); ++i) ops[execs[i].op].execs.push_back(i);

  // Replica groups name devices by global id; on one host that is the device's number.
  bool single_host = p.hosts.size() <= 1;
  std::vector<std::map<uint32_t, uint64_t>> late(ops.size());
  std::vector<uint64_t> device_late(devices.size(), 0);

  for (uint32_t oi = 0; oi < ops.size(); ++oi) {
    OpAcc& acc = ops[oi];
    const OpInfo& info = acc.info;
    CollectiveOp& out = result.ops.emplace_back();
    out.module = acc.module_name;
    out.name = info.pair_name.starts_with("?") ? info.opcode : info.pair_name;
    out.opcode = info.opcode;
    out.async = info.async;
    out.message_bytes = info.bytes;
    out.operand_shapes = info.shapes;
    out.devices = static_cast<uint32_t>(acc.devices.size());
    if (info.groups && !info.groups->empty() && !info.groups->front().empty()) {
      out.group_size = static_cast<int64_t>(info.groups->front().size());
    } else {
      out.group_size = out.devices;
      out.group_size_from_devices = true;
    }
    out.traits = collective_traits(out.opcode, out.group_size);

    // Executions on a device, numbered per run_id when every device saw the same run_ids.
    std::map<int64_t, std::set<uint32_t>> run_devices;
    bool run_ids = true;
    for (uint32_t xi : acc.execs) {
      run_ids &= execs[xi].has_run_id;
      run_devices[execs[xi].run_id].insert(execs[xi].device);
    }
    if (run_ids)
      for (auto& [id, devs] : run_devices) run_ids &= devs.size() == acc.devices.size();
    std::map<std::pair<uint32_t, int64_t>, uint64_t> counter;
    std::map<int64_t, int64_t> group_of;  // device number -> replica group
    bool split = single_host && info.groups && info.groups->size() > 1;
    if (split) {
      for (size_t g = 0; g < info.groups->size(); ++g)
        for (int64_t id : (*info.groups)[g]) group_of[id] = static_cast<int64_t>(g);
      for (uint32_t d : acc.devices) split &= group_of.count(device_number(devices[d].name)) > 0;
    }
    std::map<std::tuple<int64_t, uint64_t, int64_t>, std::vector<uint32_t>> instances;
    out.min_ps = std::numeric_limits<int64_t>::max();
    out.max_ps = 0;
    for (uint32_t xi : acc.execs) {
      Exec& x = execs[xi];
      int64_t run = run_ids ? x.run_id : 0;
      x.index = counter[{x.device, run}]++;
      int64_t group = split ? group_of[device_number(devices[x.device].name)] : 0;
      instances[{run, x.index, group}].push_back(xi);
      int64_t d = x.end - x.begin;
      ++out.count;
      out.total_ps += d;
      out.min_ps = std::min(out.min_ps, d);
      out.max_ps = std::max(out.max_ps, d);
      out.exposed_ps += x.exposed;
      CollectiveDevice& dev = result.devices[x.device];
      ++dev.executions;
      dev.total_ps += d;
      dev.exposed_ps += x.exposed;
    }
    if (out.count == 0) out.min_ps = 0;
    out.hidden_ps = out.total_ps - out.exposed_ps;
    out.mean_ps =
        out.count ? static_cast<double>(out.total_ps) / static_cast<double>(out.count) : 0;
    double moved = out.traits.size_correction * static_cast<double>(out.message_bytes) *
                   static_cast<double>(out.count);
    out.algbw_gbps = gbps(moved, out.total_ps);
    out.busbw_gbps = out.algbw_gbps * out.traits.bus_factor;

    for (auto& [key, members] : instances) {
      ++out.instances;
      int64_t first = std::numeric_limits<int64_t>::max(), last = 0;
      int64_t fastest = std::numeric_limits<int64_t>::max(), latest_start = -1;
      uint32_t late_dev = 0;
      for (uint32_t xi : members) {
        const Exec& x = execs[xi];
        first = std::min(first, x.begin);
        last = std::max(last, x.end);
        fastest = std::min(fastest, x.end - x.begin);
        if (x.begin > latest_start) {
          latest_start = x.begin;
          late_dev = x.device;
        }
      }
      int64_t wait = members.size() > 1 ? std::max<int64_t>(0, last - first - fastest) : 0;
      if (members.size() > 1) {
        ++out.multi_device_instances;
        ++late[oi][late_dev];
        ++device_late[late_dev];
      }
      out.wait_total_ps += wait;
      out.wait_max_ps = std::max(out.wait_max_ps, wait);
      if (options.instances) {
        CollectiveInstance& inst = result.instances.emplace_back();
        inst.module = out.module;
        inst.name = out.name;
        inst.run_id = std::get<0>(key);
        inst.has_run_id = run_ids;
        inst.index = std::get<1>(key);
        inst.devices = static_cast<uint32_t>(members.size());
        inst.first_start_ps = first;
        inst.last_end_ps = last;
        inst.fastest_ps = fastest;
        inst.wait_ps = wait;
        if (members.size() > 1) inst.late_device = devices[late_dev].name;
      }
    }
    for (auto& [d, n] : late[oi]) {
      if (n > out.late_count) {
        out.late_count = n;
        out.late_device = devices[d].name;
      }
    }
    result.multi_device_instances += out.multi_device_instances;
  }
  for (uint32_t d = 0; d < devices.size(); ++d) {
    result.devices[d].late_count = device_late[d];
    if (device_late[d] > result.most_late_count) {
      result.most_late_count = device_late[d];
      result.most_late_device = devices[d].name;
    }
  }
  std::erase_if(result.devices, [](const CollectiveDevice& d) { return d.executions == 0; });

  // Per (collective, N, size).
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
  auto by_time = [](const auto& a, const auto& b) { return a.total_ps > b.total_ps; };
  std::stable_sort(result.ops.begin(), result.ops.end(), by_time);
  std::stable_sort(result.sizes.begin(), result.sizes.end(), by_time);
  if (options.top > 0 && result.ops.size() > options.top) result.ops.resize(options.top);
  std::sort(result.instances.begin(), result.instances.end(),
            [](const CollectiveInstance& a, const CollectiveInstance& b) {
              return a.first_start_ps < b.first_start_ps;
            });
  for (const CollectiveOp& op : result.ops)
    if (op.message_bytes == 0 && op.count > 0) {
      result.warnings.push_back("no HLO for " + op.module + "/" + op.name +
                                ": message size and bandwidth unknown");
    }
  return result;
}

}  // namespace jaxprof
