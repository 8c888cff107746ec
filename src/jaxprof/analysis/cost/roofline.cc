#include "jaxprof/analysis/cost/roofline.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <map>
#include <unordered_map>

#include "jaxprof/analysis/cost/hlo_cost.h"
#include "jaxprof/analysis/cost/missing_hlo.h"
#include "jaxprof/analysis/ops/category.h"
#include "jaxprof/analysis/ops/device_events.h"
#include "jaxprof/analysis/ops/memory_op.h"
#include "jaxprof/analysis/ops/op_instruction.h"
#include "jaxprof/analysis/ops/self_time.h"
#include "jaxprof/model/metadata_stat_cache.h"

namespace jaxprof {

const char* bound_name(Bound b) {
  switch (b) {
    case Bound::kCompute:
      return "compute";
    case Bound::kMemory:
      return "memory";
    case Bound::kLatency:
      return "latency";
    case Bound::kCommunication:
      return "communication";
    case Bound::kAsync:
      return "async";
    case Bound::kUnknown:
      return "unknown";
  }
  return "unknown";
}

namespace {

// An op below half of its attainable rate whose roofline time is under the floor is
// latency-bound.
constexpr double kLatencyEfficiency = 0.5;

// The stats the profile may give an op: its cost, and a copy's size.
enum StatSlot { kFlops, kBytes, kModelFlops, kMemcpy, kSlots };

std::optional<uint64_t> non_negative(const std::optional<StatValue>& v) {
  if (!v) return std::nullopt;
  if (v->kind == StatKind::kDouble) {
    if (!(v->d >= 0) || !std::isfinite(v->d)) return std::nullopt;
    return static_cast<uint64_t>(std::llround(v->d));
  }
  if (v->kind == StatKind::kUint64) return v->u;
  std::optional<int64_t> i = v->as_int();
  if (!i || *i < 0) return std::nullopt;  // XLA writes -1 for "unknown"
  return static_cast<uint64_t>(*i);
}

// The byte count of a memcpy_details stat ("size:6144 dest:4 async:1").
std::optional<uint64_t> memcpy_size(const std::optional<StatValue>& v) {
  if (!v || !v->is_text()) return std::nullopt;
  std::string_view s = v->str;
  size_t at = s.find("size:");
  if (at == std::string_view::npos || (at > 0 && s[at - 1] != ' ')) return std::nullopt;
  uint64_t n = 0;
  const char* b = s.data() + at + 5;
  auto r = std::from_chars(b, s.data() + s.size(), n);
  if (r.ec != std::errc() || r.ptr == b || n == 0) return std::nullopt;
  return n;
}

// What an op key (event metadata, HLO op, module) costs, worked out once.
struct KeyCost {
  OpCost cost;             // per execution (unknown when it must be read per event)
  bool per_event = false;  // read the event's own stats for its cost
  const HloModule* module = nullptr;
  const HloInstruction* instr = nullptr;
  OpCategory category = OpCategory::kOther;
};

struct Group {
  uint32_t key_cost = 0;  // the first event's
  uint32_t first_event = 0;
  uint64_t count = 0, known = 0;
  int64_t total = 0, self = 0, known_total = 0, known_self = 0;
  uint64_t flops = 0, bytes = 0, transcendentals = 0, model_flops = 0;
  uint64_t with_model_flops = 0;
  bool children = false;
  bool mixed_sources = false;
  bool memory = false;  // the first event's stats or stream say it is a copy or fill (memory_op.h)
  CostSource source = CostSource::kUnknown;
};

uint64_t pack(uint32_t hi, uint32_t lo) { return (static_cast<uint64_t>(hi) << 32) | lo; }

class CostTable {
 public:
  CostTable(const Profile& p, OpInstructions& resolve)
      : p_(p),
        resolve_(resolve),
        metadata_stats_(p, {p.strings.find("flops"), p.strings.find("bytes_accessed"),
                            p.strings.find("model_flops"), p.strings.find("memcpy_details")}) {}

  // The cost-table slot for event e.
  uint32_t key_of(uint32_t e) {
    const Events& ev = p_.events;
    const uint64_t k1 = pack(ev.metadata[e], ev.hlo_op[e]);
    const uint64_t k2 = ev.module[e];
    auto [it, inserted] = index_.try_emplace(Key{k1, k2}, static_cast<uint32_t>(costs_.size()));
    if (inserted) costs_.push_back(work_out(e));
    return it->second;
  }
  const KeyCost& operator[](uint32_t i) const { return costs_[i]; }

  // The cost of one execution: the key's, or the event's own stats when the key says so.
  OpCost event_cost(uint32_t plane, uint32_t e, uint32_t key) {
    const KeyCost& kc = costs_[key];
    if (!kc.per_event) return kc.cost;
    if (!reader_ || plane != plane_) {
      reader_ = p_.stat_reader(plane, metadata_stats_.names());
      plane_ = plane;
    }
    std::optional<StatValue> v[kSlots];
    reader_->read(ScannedEvent{.metadata = p_.events.metadata[e], .event = e}, v);
    metadata_stats_.fill_gaps(p_.events.metadata[e], v);
    OpCost c = kc.cost;
    if (auto flops = non_negative(v[kFlops]), bytes = non_negative(v[kBytes]); flops && bytes) {
      c.source = CostSource::kProfile;
      c.flops = *flops;
      c.bytes_accessed = *bytes;
      c.transcendentals = 0;
      c.detail = "stats flops, bytes_accessed";
      if (auto mf = non_negative(v[kModelFlops])) {
        c.has_model_flops = true;
        c.model_flops = *mf;
      }
      return c;
    }
    if (kc.cost.known()) return c;
    if (auto size = memcpy_size(v[kMemcpy])) {
      c.source = CostSource::kMemcpy;
      c.flops = 0;
      c.transcendentals = 0;
      c.bytes_accessed = *size;
      c.detail = "memcpy_details size";
    }
    return c;
  }

 private:
  struct Key {
    uint64_t a, b;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const { return std::hash<uint64_t>()(k.a * 31 + k.b); }
  };

  KeyCost work_out(uint32_t e) {
    KeyCost kc;
    const Events& ev = p_.events;
    const uint32_t plane = p_.event_metadata[ev.metadata[e]].plane;
    ResolvedInstruction r = resolve_(e);
    kc.module = r.module;
    kc.instr = r.instr;
    kc.category =
        r.instr ? categorize_instruction(*r.module, *r.instr) : categorize({}, p_.event_name(e));
    OpCost from_hlo;
    if (r.instr) {
      from_hlo = hlo_instruction_cost(*r.module, *r.instr);
      if (from_hlo.known() && !r.how.empty()) from_hlo.detail += " (" + r.how + ")";
    }
    // 1. The profile's own stats, on the op's metadata (TPU) ...
    const auto& m = metadata_stats_[ev.metadata[e]];
    auto flops = non_negative(m[kFlops]), bytes = non_negative(m[kBytes]);
    if (flops && bytes) {
      kc.cost.source = CostSource::kProfile;
      kc.cost.flops = *flops;
      kc.cost.bytes_accessed = *bytes;
      kc.cost.detail = "stats flops, bytes_accessed";
      if (auto mf = non_negative(m[kModelFlops])) {
        kc.cost.has_model_flops = true;
        kc.cost.model_flops = *mf;
      }
      kc.cost.compute = from_hlo.compute;
      return kc;
    }
    // ... or on the events themselves, read per event.
    const bool event_stats =
        p_.plane_may_have_stat(plane, "flops") && p_.plane_may_have_stat(plane, "bytes_accessed");
    const bool copies = p_.plane_may_have_stat(plane, "memcpy_details");
    // 2 and 3. The HLO, custom calls included.
    if (from_hlo.known()) {
      kc.cost = std::move(from_hlo);
      kc.per_event = event_stats;
      return kc;
    }
    kc.cost.detail = r.instr             ? from_hlo.detail
                     : ev.hlo_op[e] == 0 ? "no HLO op and no stats"
                     : p_.hlo.empty()    ? kNoHloInProfile
                                         : "the HLO op is not in the profile's HLO";
    kc.cost.compute = from_hlo.compute;
    kc.per_event = event_stats || copies;
    return kc;
  }

  const Profile& p_;
  OpInstructions& resolve_;
  MetadataStatCache<kSlots> metadata_stats_;
  std::unordered_map<Key, uint32_t, KeyHash> index_;
  std::vector<KeyCost> costs_;
  std::unique_ptr<StatReader> reader_;
  uint32_t plane_ = UINT32_MAX;
};

// One half of an asynchronous pair (copy-start/copy-done, all-gather-start, send, ...): its
// bytes may move while other ops run, outside its own measured time.
bool is_async_half(std::string_view opcode) {
  return opcode.ends_with("-start") || opcode.ends_with("-done") || opcode.ends_with("-update") ||
         opcode == "send" || opcode == "recv";
}

// Roofline figures from costs and a time, for the peaks given.
void finish(RooflineFigures& f, double peak_flops, double peak_bw, uint64_t executions,
            int64_t latency_floor_ps, bool collective, bool async_half) {
  if (!f.flops || !f.bytes_accessed || f.time_ps <= 0) return;
  const double secs = static_cast<double>(f.time_ps) * 1e-12;
  const auto flops = static_cast<double>(*f.flops);
  const auto bytes = static_cast<double>(*f.bytes_accessed);
  f.flop_rate = flops / secs;
  f.bandwidth = bytes / secs;
  if (bytes > 0) f.intensity = flops / bytes;
  if (collective) {
    // Collectives wait on the interconnect, which the roofline does not model (see
    // `jaxprof collectives` for their bus bandwidth).
    f.bound = Bound::kCommunication;
    return;
  }
  const bool compute_known = peak_flops > 0 || flops == 0;
  const bool memory_known = peak_bw > 0 || bytes == 0;
  if (!compute_known || !memory_known) return;
  const double t_compute = flops > 0 ? flops / peak_flops : 0;
  const double t_memory = bytes > 0 ? bytes / peak_bw : 0;
  const double predicted = std::max(t_compute, t_memory);
  if (peak_flops > 0)
    f.attainable_flop_rate =
        f.intensity && peak_bw > 0 ? std::min(peak_flops, *f.intensity * peak_bw) : peak_flops;
  if (async_half && predicted > secs) {
    // Faster than the hardware allows: the work happened outside the op's own time.
    f.bound = Bound::kAsync;
    return;
  }
  f.predicted_ps = static_cast<int64_t>(std::llround(predicted * 1e12));
  f.efficiency = predicted / secs;
  f.model_error = *f.efficiency - 1;
  f.bound = t_compute >= t_memory ? Bound::kCompute : Bound::kMemory;
  const double per_execution_ps =
      predicted * 1e12 / static_cast<double>(std::max<uint64_t>(executions, 1));
  if (predicted == 0 || (per_execution_ps < static_cast<double>(latency_floor_ps) &&
                         *f.efficiency < kLatencyEfficiency))
    f.bound = Bound::kLatency;
}

void set_costs(RooflineFigures& f, const Group& g) {
  f.flops = g.flops;
  f.bytes_accessed = g.bytes;
  f.transcendentals = g.transcendentals;
  if (g.with_model_flops == g.count) f.model_flops = g.model_flops;
}

// The executions of each op on one device, by (module, op name).
using OpGroups = std::unordered_map<uint64_t, Group>;

// What gathering a device's ops needs besides the device; the devices share it.
struct GatherContext {
  const Profile& p;
  const RooflineOptions& options;
  const EventFilter& filter;
  const SteadyState& steady;
  CostTable& costs;
  // Per event metadata, whether the filter keeps its name: -1 until asked.
  std::vector<int8_t> name_ok;
};

// The device's ops the filter keeps, each with its executions' times and summed costs.
OpGroups gather_op_groups(GatherContext& cx, const DeviceLines& dev) {
  const Profile& p = cx.p;
  const EventFilter& filter = cx.filter;
  const SteadyState& steady = cx.steady;
  CostTable& costs = cx.costs;
  std::vector<int8_t>& name_ok = cx.name_ok;
  OpGroups groups;
  std::vector<int64_t> self;
  std::vector<uint8_t> participates;
  const Events& ev = p.events;
  for (uint32_t li : dev.lines) {
    const Line& line = p.lines[li];
    const uint32_t b = line.first_event, n = line.event_count;
    if (dev.hlo_ops_only) {
      participates.assign(n, 0);
      for (uint32_t k = 0; k < n; ++k) participates[k] = dev.counts(ev, b + k);
    }
    // Op times (and self times) on the device's own clock where events carry it, as `ops`.
    compute_op_self_times(ev, line, self, dev.hlo_ops_only ? &participates : nullptr);
    const LineMemoryOps memory_op(p, li);
    for (uint32_t k = 0; k < n; ++k) {
      const uint32_t e = b + k;
      if (!dev.counts(ev, e) || steady.set_apart(e)) continue;
      const int64_t d = ev.op_duration_ps(line, e);
      if (d < cx.options.filter.min_duration_ps) continue;
      const uint32_t mi = ev.metadata[e];
      if (filter.filters_names()) {
        if (name_ok[mi] < 0) name_ok[mi] = filter.keeps_name(p.event_display_name(e)) ? 1 : 0;
        if (!name_ok[mi]) continue;
      }
      const EventMetadata& md = p.event_metadata[mi];
      const uint32_t op_name = ev.hlo_op[e] != 0      ? ev.hlo_op[e]
                               : md.display_name != 0 ? md.display_name | 0x80000000u
                                                      : md.name | 0x80000000u;
      auto [it, inserted] = groups.try_emplace(pack(ev.module[e], op_name));
      Group& g = it->second;
      const uint32_t key = costs.key_of(e);
      if (inserted) {
        g.key_cost = key;
        g.first_event = e;
        g.memory = !memory_op.never() && memory_op(e) != MemoryOp::kNone;
      }
      const OpCost c = costs.event_cost(dev.plane, e, key);
      ++g.count;
      g.total += d;
      g.self += self[k];
      if (self[k] + kNestingTolerancePs < d) g.children = true;
      if (!c.known()) continue;
      if (g.known == 0) {
        g.source = c.source;
      } else if (g.source != c.source) {
        g.mixed_sources = true;
      }
      ++g.known;
      g.known_total += d;
      g.known_self += self[k];
      g.flops = cost_add(g.flops, c.flops);
      g.bytes = cost_add(g.bytes, c.bytes_accessed);
      g.transcendentals = cost_add(g.transcendentals, c.transcendentals);
      if (c.has_model_flops) {
        g.model_flops = cost_add(g.model_flops, c.model_flops);
        ++g.with_model_flops;
      }
    }
  }
  return groups;
}

// An op's row: where it belongs, its cost where every execution has one, and its roofline
// figures against the device's peaks.
RooflineOp op_row(const Profile& p, uint64_t gkey, const Group& g, CostTable& costs, uint32_t plane,
                  const DevicePeaks& peaks, int64_t latency_floor_ps) {
  const KeyCost& kc = costs[g.key_cost];
  const uint32_t module_index = p.events.module[g.first_event];
  const ModuleKey& mk = p.modules[module_index];
  RooflineOp op;
  const auto name_id = static_cast<StringId>(gkey & 0x7fffffffu);
  op.name = std::string(p.str(name_id));
  op.module = std::string(p.str(mk.name));
  op.program_id = mk.program_id;
  if (module_index == 0 && kc.module) {
    // A kernel the HLO names (by its kernel name) belongs to that program.
    op.module = std::string(kc.module->name);
    op.program_id = kc.module->program_id == HloIndex::kUnknownProgramId
                        ? kNoProgram
                        : static_cast<ProgramId>(kc.module->program_id);
  }
  op.category = category_name(g.memory ? OpCategory::kMemcpy : kc.category);
  if (kc.instr) op.opcode = std::string(kc.instr->opcode);
  op.count = g.count;
  op.self_ps = g.self;
  op.has_children = g.children;
  op.figures.time_ps = g.total;
  const OpCost& first = kc.cost;
  op.compute = first.compute;
  if (g.known == g.count) {
    op.source = g.mixed_sources ? CostSource::kProfile : g.source;
    op.detail = costs.event_cost(plane, g.first_event, g.key_cost).detail;
    set_costs(op.figures, g);
  } else {
    op.source = CostSource::kUnknown;
    op.detail = g.known > 0 ? fmt::format("{} of {} executions have a cost", g.known, g.count)
                            : first.detail;
  }
  op.peak_flops_per_s = peaks.flops_for(op.compute, op.peak_type);
  const bool collective = kc.category == OpCategory::kCollective;
  finish(op.figures, op.peak_flops_per_s, peaks.bytes_per_s, g.count, latency_floor_ps, collective,
         is_async_half(op.opcode));
  return op;
}

// The ops of a program, or of a device, summed for its figures.
struct ProgramAcc {
  Group leaf;  // costs of the ops (not their containers) with known costs
  int64_t predicted_ps = 0;
  int64_t predicted_time_ps = 0;  // measured time of the ops with a prediction
  std::vector<std::pair<Bound, int64_t>> bound_time;
};

// Adds an op whose executions all have a cost.
void add_known_op(ProgramAcc& acc, const Group& g, const RooflineOp& op) {
  // Nested ops count in their children; asynchronous halves in the ops they overlap.
  if (!g.children && op.figures.bound != Bound::kAsync) {
    acc.leaf.flops = cost_add(acc.leaf.flops, g.flops);
    acc.leaf.bytes = cost_add(acc.leaf.bytes, g.bytes);
    acc.leaf.transcendentals = cost_add(acc.leaf.transcendentals, g.transcendentals);
    acc.leaf.model_flops = cost_add(acc.leaf.model_flops, g.model_flops);
    acc.leaf.with_model_flops += g.with_model_flops;
    acc.leaf.count += g.count;
    if (op.figures.predicted_ps) {
      acc.predicted_ps += *op.figures.predicted_ps;
      acc.predicted_time_ps += g.self;
    }
  }
  acc.leaf.known_self += g.self;
  acc.bound_time.emplace_back(op.figures.bound, g.self);
}

// A program's (or the device's) figures from its ops; `known_ps` is the time of those with costs.
void close_figures(RooflineFigures& f, const ProgramAcc& acc, int64_t& known_ps) {
  known_ps = acc.leaf.known_self;
  if (acc.leaf.count == 0 && acc.leaf.known_self == 0) return;
  f.flops = acc.leaf.flops;
  f.bytes_accessed = acc.leaf.bytes;
  f.transcendentals = acc.leaf.transcendentals;
  if (acc.leaf.with_model_flops == acc.leaf.count && acc.leaf.count > 0)
    f.model_flops = acc.leaf.model_flops;
  // Rates over the time of the ops whose costs are known, so that unknown ops do not dilute
  // them; the share of time that is known is the coverage.
  if (known_ps > 0) {
    const double secs = static_cast<double>(known_ps) * 1e-12;
    f.flop_rate = static_cast<double>(acc.leaf.flops) / secs;
    f.bandwidth = static_cast<double>(acc.leaf.bytes) / secs;
    if (acc.leaf.bytes > 0)
      f.intensity = static_cast<double>(acc.leaf.flops) / static_cast<double>(acc.leaf.bytes);
  }
  // Predicted against measured over the ops the roofline predicts (not collectives, not ops
  // without peaks).
  if (acc.predicted_time_ps > 0) {
    f.predicted_ps = acc.predicted_ps;
    f.efficiency =
        static_cast<double>(acc.predicted_ps) / static_cast<double>(acc.predicted_time_ps);
    f.model_error = *f.efficiency - 1;
  }
  // The bound that holds most of the known time.
  std::vector<int64_t> by_bound(kBounds, 0);
  for (auto [b, t] : acc.bound_time) by_bound[static_cast<int>(b)] += t;
  auto top = std::max_element(by_bound.begin(), by_bound.end());
  if (*top > 0) f.bound = static_cast<Bound>(top - by_bound.begin());
}

// The device's op rows, its coverage, and its programs' and its own total figures.
void add_op_rows(const Profile& p, uint32_t plane, OpGroups& groups, CostTable& costs,
                 int64_t latency_floor_ps, RooflineDevice& out) {
  std::map<std::pair<std::string, ProgramId>, size_t> program_of;  // -> programs slot
  std::vector<ProgramAcc> program_acc;
  ProgramAcc device_acc;
  for (auto& [gkey, g] : groups) {
    RooflineOp op = op_row(p, gkey, g, costs, plane, out.peaks, latency_floor_ps);
    const bool known = g.known == g.count;
    out.coverage.total_ps += g.self;
    if (known) {
      out.coverage.known_ps += g.self;
      out.coverage.by_source_ps[static_cast<int>(op.source)] += g.self;
    } else {
      ++out.coverage.unknown_ops;
      out.coverage.by_source_ps[static_cast<int>(CostSource::kUnknown)] += g.self;
    }

    auto [pit, pnew] = program_of.try_emplace({op.module, op.program_id}, program_acc.size());
    if (pnew) {
      program_acc.emplace_back();
      RooflineProgram& prog = out.programs.emplace_back();
      prog.module = op.module;
      prog.program_id = op.program_id;
    }
    RooflineProgram& prog = out.programs[pit->second];
    ++prog.ops;
    prog.figures.time_ps += g.self;
    if (known) {
      add_known_op(program_acc[pit->second], g, op);
      add_known_op(device_acc, g, op);
    }
    out.ops.push_back(std::move(op));
  }
  out.total.time_ps = out.coverage.total_ps;
  for (size_t i = 0; i < out.programs.size(); ++i)
    close_figures(out.programs[i].figures, program_acc[i], out.programs[i].known_ps);
  int64_t device_known = 0;
  close_figures(out.total, device_acc, device_known);
}

// Ops and programs by time (then name), the largest `top` ops kept (0: all).
void order_rows(RooflineDevice& out, size_t top) {
  std::sort(out.ops.begin(), out.ops.end(), [](const RooflineOp& a, const RooflineOp& b) {
    if (a.figures.time_ps != b.figures.time_ps) return a.figures.time_ps > b.figures.time_ps;
    if (a.name != b.name) return a.name < b.name;
    return a.program_id < b.program_id;
  });
  std::sort(out.programs.begin(), out.programs.end(),
            [](const RooflineProgram& a, const RooflineProgram& b) {
              if (a.figures.time_ps != b.figures.time_ps)
                return a.figures.time_ps > b.figures.time_ps;
              if (a.module != b.module) return a.module < b.module;
              return a.program_id < b.program_id;
            });
  if (top > 0 && out.ops.size() > top) out.ops.resize(top);
}

}  // namespace

RooflinePart compute_roofline_part(const Profile& p, const RooflineOptions& options) {
  EventFilter filter(options.filter);
  RooflinePart result;
  std::vector<DeviceLines> devices = op_devices(p);
  std::vector<uint32_t> needed;
  for (const DeviceLines& dev : devices) {
    result.cpu_backend = result.cpu_backend || dev.hlo_ops_only;
    result.device_planes = result.device_planes || !dev.hlo_ops_only;
    if (filter.keeps_device(dev.name))
      needed.insert(needed.end(), dev.lines.begin(), dev.lines.end());
  }
  p.require_lines(needed);
  const SteadyState& steady = steady_state(p, options.steady);

  OpInstructions resolve(p);
  CostTable costs(p, resolve);
  GatherContext cx{p,      options, filter,
                   steady, costs,   std::vector<int8_t>(p.event_metadata.size(), -1)};
  MissingHloTally missing;

  for (const DeviceLines& dev : devices) {
    if (!filter.keeps_device(dev.name)) continue;
    const Plane& plane = p.planes[dev.plane];
    RooflineDevice out;
    out.device = dev.name;
    out.host = p.hosts[plane.host].name;
    out.peaks = device_peaks(p, dev.plane, options.peaks);
    OpGroups groups = gather_op_groups(cx, dev);
    if (groups.empty()) continue;
    add_op_rows(p, dev.plane, groups, costs, options.latency_floor_ps, out);
    for (const RooflineOp& op : out.ops) missing.count(op);
    order_rows(out, options.top);
    for (const std::string& note : out.peaks.notes) result.notes[note].push_back(out.device);
    result.devices.push_back(std::move(out));
  }
  result.missing = missing.counts();
  return result;
}

RooflineResult merge_roofline_parts(std::vector<RooflinePart> parts,
                                    const RooflineOptions& options) {
  RooflineResult result;
  result.latency_floor_ps = options.latency_floor_ps;
  // A profile of all the parts' hosts takes the CPU backend's devices only when no host has
  // device planes with ops (op_devices).
  const bool device_planes = std::any_of(parts.begin(), parts.end(),
                                         [](const RooflinePart& x) { return x.device_planes; });
  std::map<std::string, std::vector<std::string>> notes;  // peak note -> devices
  MissingHloTally missing;
  for (RooflinePart& part : parts) {
    if (device_planes && part.cpu_backend) continue;
    for (RooflineDevice& d : part.devices) result.devices.push_back(std::move(d));
    for (auto& [note, names] : part.notes)
      notes[note].insert(notes[note].end(), names.begin(), names.end());
    missing.add(part.missing);
  }
  // One warning per distinct note, naming its devices.
  for (const auto& [note, names] : notes)
    result.warnings.push_back(
        names.size() == 1 ? names[0] + ": " + note
                          : fmt::format("{} devices ({}, ...): {}", names.size(), names[0], note));
  missing.warn(result.warnings);
  return result;
}

RooflineResult compute_roofline(const Profile& p, const RooflineOptions& options) {
  std::vector<RooflinePart> parts;
  parts.push_back(compute_roofline_part(p, options));
  return merge_roofline_parts(std::move(parts), options);
}

}  // namespace jaxprof
