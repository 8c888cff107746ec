#include "jaxprof/render/perfetto/perfetto.h"

#include <fmt/format.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <optional>
#include <tuple>

#include "jaxprof/analysis/collectives/collectives.h"
#include "jaxprof/analysis/compile/compile.h"
#include "jaxprof/analysis/memory/memory_timeline.h"
#include "jaxprof/analysis/ops/category.h"
#include "jaxprof/analysis/ops/device_events.h"
#include "jaxprof/analysis/ops/memory_op.h"
#include "jaxprof/analysis/steps/module_executions.h"
#include "jaxprof/analysis/steps/steady_state.h"
#include "jaxprof/analysis/timeline/timeline_segments.h"
#include "jaxprof/common/error.h"
#include "jaxprof/common/units.h"
#include "jaxprof/io/base64.h"
#include "jaxprof/render/perfetto/arrival_flows.h"
#include "jaxprof/render/perfetto/critical_path_track.h"
#include "jaxprof/render/perfetto/json_trace_sink.h"
#include "jaxprof/render/perfetto/launch_flows.h"
#include "jaxprof/render/perfetto/perfetto_args.h"
#include "jaxprof/render/perfetto/proto_trace_sink.h"
#include "jaxprof/render/text/text.h"

namespace jaxprof {

std::string ps_to_us_exact(int64_t ps) {
  bool neg = ps < 0;
  uint64_t a = neg ? static_cast<uint64_t>(-(ps + 1)) + 1 : static_cast<uint64_t>(ps);
  uint64_t whole = a / 1000000, frac = a % 1000000;
  std::string out = neg ? "-" : "";
  out += std::to_string(whole);
  if (frac == 0) return out;
  std::string f = fmt::format("{:06d}", frac);
  while (f.back() == '0') f.pop_back();
  return out + "." + f;
}

std::string json_string_html_safe(std::string_view s) {
  std::string j = json_string(s), out;
  out.reserve(j.size());
  for (char c : j) {
    if (c == '<')
      out += "\\u003c";
    else if (c == '>')
      out += "\\u003e";
    else if (c == '&')
      out += "\\u0026";
    else
      out += c;
  }
  return out;
}

namespace {

// Line tids start after the derived tracks of every device of the plane (two per device);
// counter tracks after the lines.
constexpr int kFirstLineTid = 1000;
constexpr int kFirstCounterTid = 900000;
// A device's counters (its `_counters_` line k): from kFirstDeviceCounterTid + 1000 k.
constexpr int kFirstDeviceCounterTid = 950000;
// With one_line_at_a_time, a line's pages in the file go back every this many events written.
constexpr uint32_t kReleaseEvents = uint32_t{1} << 16;

}  // namespace

namespace {

// What an exported plane holds: the devices whose op lines are on it, and its lines.
struct ExportedPlane {
  uint32_t plane = 0;
  std::vector<size_t> devices;  // indices into op_devices()
};

std::string program_json(ProgramId id) {
  return id == kNoProgram ? std::string("null") : std::to_string(id);
}

// "name(program id)", the label XLA gives module events on TPU "XLA Modules" lines (and that
// module_executions reads back), or the name alone when the program id is unknown.
std::string execution_label(const ModuleExecution& x) {
  return x.program_id == kNoProgram ? x.name : fmt::format("{}({})", x.name, x.program_id);
}

// Collective message sizes and bandwidth factors per (module, op).
using CollectiveOps = std::map<std::pair<std::string, std::string>, const CollectiveOp*>;

// The name and the args of op events, kept per (metadata, HLO op, module, memory) since most
// events share them: the HLO op's opcode, JAX op path, source line and category where the
// profile has its HLO, and the collective's message size.
class OpTexts {
 public:
  struct OpText {
    std::string name, name_json;
    TraceArgs args;
    const CollectiveOp* collective = nullptr;
  };

  OpTexts(const Profile& p, const CollectiveOps& collective) : p_(p), collective_(collective) {}

  // The args every event of its metadata entry shares (its stats), and its HLO op and module.
  void base_args(uint32_t e, TraceArgs& args);
  // `memory`: the event's own stats or line say it is a copy or fill (memory_op.h).
  const OpText& op_text(uint32_t e, bool memory);

 private:
  const Profile& p_;
  const CollectiveOps& collective_;
  // Per event metadata: the args every event of it shares (stats of the metadata entry).
  std::map<uint32_t, std::vector<Stat>> metadata_stats_;
  // Per (metadata, hlo op, module, memory): the event name and the derived args of an op.
  std::map<std::tuple<uint32_t, StringId, uint32_t, bool>, OpText> texts_;
};

void OpTexts::base_args(uint32_t e, TraceArgs& args) {
  const Events& ev = p_.events;
  uint32_t mi = ev.metadata[e];
  auto it = metadata_stats_.find(mi);
  if (it == metadata_stats_.end()) it = metadata_stats_.emplace(mi, p_.metadata_stats(mi)).first;
  for (const Stat& st : it->second) args.set_stat(p_.str(st.name), st.value);
  if (ev.hlo_op[e] != 0) args.set("hlo_op", json_string_html_safe(p_.str(ev.hlo_op[e])));
  if (ev.module[e] != 0) {
    const ModuleKey& mk = p_.modules[ev.module[e]];
    args.set("hlo_module", json_string_html_safe(p_.str(mk.name)));
    if (mk.program_id != kNoProgram) args.set("program_id", program_json(mk.program_id));
  }
}

const OpTexts::OpText& OpTexts::op_text(uint32_t e, bool memory) {
  const Events& ev = p_.events;
  auto key = std::make_tuple(ev.metadata[e], ev.hlo_op[e], ev.module[e], memory);
  auto it = texts_.find(key);
  if (it != texts_.end()) return it->second;
  OpText t;
  const ModuleKey& mk = p_.modules[ev.module[e]];
  std::string module(p_.str(mk.name));
  std::string_view op = ev.hlo_op[e] ? p_.str(ev.hlo_op[e]) : p_.event_display_name(e);
  t.name = std::string(op);
  t.name_json = json_string_html_safe(op);
  std::string opcode, op_name, source;
  OpCategory cat = OpCategory::kOther;
  bool from_hlo = false;
  if (ev.hlo_op[e] != 0)
    if (const HloModule* mod = p_.hlo.find(hlo_program_key(mk.program_id), module))
      if (const HloInstruction* instr = mod->find(op)) {
        opcode = std::string(instr->opcode);
        op_name = std::string(instr->op_name);
        source = mod->source_line(*instr);
        cat = categorize_instruction(*mod, *instr);
        from_hlo = true;
      }
  if (memory)
    cat = OpCategory::kMemcpy;
  else if (!from_hlo)
    cat = categorize({}, p_.event_name(e));
  base_args(e, t.args);
  if (!module.empty()) t.args.set("module", json_string_html_safe(module));
  if (p_.event_name(e) != op) {
    t.args.set("kernel", json_string_html_safe(p_.event_name(e)));
    t.args.set("long_name", json_string_html_safe(p_.event_name(e)));
  }
  if (!opcode.empty()) t.args.set("opcode", json_string_html_safe(opcode));
  if (!op_name.empty()) t.args.set("op_name", json_string_html_safe(op_name));
  if (!source.empty()) t.args.set("source", json_string_html_safe(source));
  t.args.set("category", fmt::format("\"{}\"", category_name(cat)));
  auto c = collective_.find({module, std::string(op)});
  if (c != collective_.end()) {
    t.collective = c->second;
    t.args.set("message_bytes", std::to_string(c->second->message_bytes));
    t.args.set("group_size", std::to_string(c->second->group_size));
  }
  return texts_.emplace(key, std::move(t)).first->second;
}

// Writes the trace: the analyses it needs are run first, then each plane is a process with its
// derived tracks (category and modules per device), every line with every event, and on a host's
// CPU plane its allocators' memory in use.
class PerfettoWriter {
 public:
  PerfettoWriter(const Profile& p, TraceSink& sink, PerfettoSummary& s,
                 const PerfettoOptions& options);
  void write();

 private:
  void collect_collectives();
  void collect_planes();
  void collect_memory();
  void hand_back_pages();

  void header();
  void process(const ExportedPlane& xp, int pid);
  // The derived tracks of the plane's devices; whether one of them has an "XLA Modules" line.
  bool device_tracks(const ExportedPlane& xp, int pid);
  void category_track(int pid, int tid, const DeviceLines& dev, bool own,
                      const DeviceSegments& seg);
  void modules_track(int pid, int tid, size_t di, bool own);
  void line_track(const ExportedPlane& xp, int pid, size_t k, bool module_line);
  void memory_tracks(uint32_t host, int pid);
  void counter_tracks(uint32_t plane, const Line& line, int pid, int first_tid);
  void op_event(uint32_t plane, uint32_t e, int pid, int tid, bool memory, SliceFlow flow);
  void plain_event(uint32_t plane, uint32_t e, int pid, int tid);
  void add_notes();

  const Profile& p_;
  PerfettoSummary& s_;
  const std::vector<DeviceLines> devices_;
  const std::vector<DeviceExecutions>& executions_;  // decodes device lines
  const SteadyStateOptions steady_default_;
  const SteadyState& steady_;
  const std::vector<DeviceSegments> segments_;
  std::map<std::string, const DeviceSegments*> segments_of_;
  CollectivesResult coll_;
  CollectiveOps collective_;
  std::vector<ExportedPlane> planes_;
  MemoryTimeline memory_;
  std::optional<LaunchFlows> flows_;
  std::optional<ArrivalFlows> arrivals_;
  std::optional<CriticalPathTrack> path_;
  TraceSink& out_;
  const bool one_line_at_a_time_;
  OpTexts texts_;
  StringId correlation_name_ = UINT32_MAX;  // the stat's name, interned (UINT32_MAX: none)
  uint64_t byte_stats_ = 0;                 // byte-valued stats left out
  TraceArgs op_args_, plain_args_;          // an event's args, kept from event to event
};

PerfettoWriter::PerfettoWriter(const Profile& p, TraceSink& sink, PerfettoSummary& s,
                               const PerfettoOptions& options)
    : p_(p),
      s_(s),
      devices_(op_devices(p)),
      executions_(module_executions(p)),
      steady_(steady_state(p, steady_default_)),
      segments_(timeline_segments(p, steady_default_)),
      out_(sink),
      one_line_at_a_time_(options.one_line_at_a_time),
      texts_(p, collective_) {
  for (const DeviceSegments& d : segments_) segments_of_[d.device] = &d;
  hand_back_pages();
  collect_collectives();
  collect_planes();
  flows_.emplace(p_, devices_);
  hand_back_pages();
  arrivals_.emplace(p_, devices_, coll_);
  if (options.critical_path) {
    std::vector<uint32_t> planes;
    for (const ExportedPlane& xp : planes_) planes.push_back(xp.plane);
    path_.emplace(p_, devices_, planes, *options.critical_path);
    if (path_->left_out())
      s_.notes.push_back(fmt::format("{} critical-path segments on no exported plane left out",
                                     path_->left_out()));
  }
  collect_memory();
  hand_back_pages();
  correlation_name_ = p_.strings.find("correlation_id");
}

// With one_line_at_a_time, the pages of the file the analyses read (the stats of the lines they
// decoded) go back between them: the lines are read again one at a time when written.
void PerfettoWriter::hand_back_pages() {
  if (one_line_at_a_time_) p_.release_file_pages();
}

// Collective message sizes and bandwidth factors per (module, op). Every op event is exported,
// set apart from the steady state or not.
void PerfettoWriter::collect_collectives() {
  coll_ = compute_collectives(p_, {.instances = true, .members = true, .steady = {true, true}});
  for (const CollectiveOp& c : coll_.ops)
    if (c.message_bytes > 0) collective_[{c.module, c.name}] = &c;
  if (collective_.empty())
    s_.notes.push_back(coll_.ops.empty()
                           ? "no collectives in the profile: no bandwidth args"
                           : "collective message sizes unknown (no HLO in the profile): no "
                             "bandwidth args");
}

// Planes in profile order: device planes, and host planes with threads; every line of them is
// decoded (one at a time as it is written, with one_line_at_a_time), as every event is written.
// A device plane without op lines (a TPU's SparseCore, the Megascale Trace of DCN transfers) is
// a process of its own lines, with no derived tracks.
void PerfettoWriter::collect_planes() {
  std::map<uint32_t, size_t> plane_slot;
  std::vector<uint32_t> lines;
  for (uint32_t pi = 0; pi < p_.planes.size(); ++pi) {
    const Plane& plane = p_.planes[pi];
    bool has_events = std::any_of(plane.lines.begin(), plane.lines.end(),
                                  [&](uint32_t li) { return p_.lines[li].event_count > 0; });
    bool host = plane.kind == PlaneKind::kHostCpu && has_events;
    bool device = is_device_plane(plane.kind) && has_events;
    for (const DeviceLines& d : devices_) device |= d.plane == pi;
    if (!host && !device) {
      if (has_events) {
        uint64_t n = 0;
        for (uint32_t li : plane.lines) n += p_.lines[li].event_count;
        s_.notes.push_back(
            fmt::format("plane {}: {} events not exported (neither a device nor "
                        "a host's CPU plane)",
                        p_.str(plane.name), n));
      }
      continue;
    }
    plane_slot[pi] = planes_.size();
    planes_.push_back({pi, {}});
    lines.insert(lines.end(), plane.lines.begin(), plane.lines.end());
  }
  for (size_t di = 0; di < devices_.size(); ++di)
    planes_[plane_slot[devices_[di].plane]].devices.push_back(di);
  if (!one_line_at_a_time_) p_.require_lines(lines);
}

// Every allocator's bytes in use after each of its events, unsampled.
void PerfettoWriter::collect_memory() {
  memory_ = compute_memory_timeline(p_, {.top = 1, .max_points = 0, .allocator = {}});
}

void PerfettoWriter::write() {
  header();
  int pid = 0;
  for (const ExportedPlane& xp : planes_) {
    ++pid;
    process(xp, pid);
    bool module_line = device_tracks(xp, pid);
    const Plane& plane = p_.planes[xp.plane];
    for (size_t k = 0; k < plane.lines.size(); ++k) line_track(xp, pid, k, module_line);
    if (plane.kind == PlaneKind::kHostCpu) memory_tracks(plane.host, pid);
    if (path_) s_.path_segments += path_->write(static_cast<size_t>(pid - 1), pid, out_);
  }
  add_notes();
  out_.end(s_.notes);
}

// The trace's header, and the HLO the analyses read, so that the trace read back tells the same
// story.
void PerfettoWriter::header() {
  out_.begin(p_.base_ns);
  for (const auto& m : p_.hlo.modules()) {
    if (m->serialized.empty()) continue;
    out_.hlo_proto(m->program_id == HloIndex::kUnknownProgramId ? std::string("null")
                                                                : std::to_string(m->program_id),
                   m->name, m->bare_module, base64_encode(m->serialized));
    ++s_.hlo_modules;
  }
}

// A plane is a process, named by the plane and labelled with its host.
void PerfettoWriter::process(const ExportedPlane& xp, int pid) {
  const Plane& plane = p_.planes[xp.plane];
  out_.process(pid, p_.str(plane.name), p_.hosts[plane.host].name);
}

// Derived tracks (marked so that a reader of the trace leaves them out), and the module
// executions as an "XLA Modules" line (where module_executions reads them back) on devices
// that are not CPU ones.
bool PerfettoWriter::device_tracks(const ExportedPlane& xp, int pid) {
  const Plane& plane = p_.planes[xp.plane];
  int tid = 0;
  bool module_line = false;
  for (size_t di : xp.devices) {
    const DeviceLines& dev = devices_[di];
    auto seg = segments_of_.find(dev.name);
    if (seg == segments_of_.end()) continue;  // no op events
    // A device that is not its plane (the CPU backend's) names itself on its tracks.
    const bool own = dev.name == p_.str(plane.name);
    ++s_.devices;
    ++tid;
    category_track(pid, tid, dev, own, *seg->second);
    ++tid;
    modules_track(pid, tid, di, own);
    module_line |= !dev.hlo_ops_only;
  }
  return module_line;
}

// The device's time by category: compute, exposed communication, exposed memcpy, idle, set apart.
void PerfettoWriter::category_track(int pid, int tid, const DeviceLines& dev, bool own,
                                    const DeviceSegments& seg) {
  out_.thread(pid, tid, own ? "category" : "category " + dev.name, /*derived=*/true);
  for (const Segment& g : seg.segments) {
    out_.slice(pid, tid, segment_kind_name(g.kind), {}, g.interval.begin, g.interval.length(),
               nullptr, {});
    ++s_.segments;
  }
}

// The device's module executions with their role in the steady state: an "XLA Modules" line, or
// a derived track on devices whose op lines carry HLO ops only.
void PerfettoWriter::modules_track(int pid, int tid, size_t di, bool own) {
  const DeviceLines& dev = devices_[di];
  if (dev.hlo_ops_only)
    out_.thread(pid, tid, own ? "modules" : "modules " + dev.name, /*derived=*/true);
  else
    out_.thread(pid, tid, "XLA Modules", /*derived=*/false);
  const DeviceExecutions& dx = executions_[di];
  for (size_t k = 0; k < dx.executions.size(); ++k) {
    const ModuleExecution& x = dx.executions[k];
    TraceArgs args;
    args.set("hlo_module", json_string_html_safe(x.name));
    if (x.program_id != kNoProgram) args.set("program_id", program_json(x.program_id));
    args.set("warmup", x.warmup ? "true" : "false");
    args.set("role", fmt::format("\"{}\"", execution_role_name(steady_.roles[di][k])));
    if (x.run_id) args.set("run_id", std::to_string(*x.run_id));
    args.set("ops", std::to_string(x.events.size()));
    out_.slice(pid, tid, execution_label(x), {}, x.start_ps, x.duration_ps(), &args, {});
    ++s_.executions;
  }
}

// The plane's k-th line, every event of it: the op events of the devices on it with their op's
// args, the others with their stats.
void PerfettoWriter::line_track(const ExportedPlane& xp, int pid, size_t k, bool module_line) {
  const Plane& plane = p_.planes[xp.plane];
  uint32_t li = plane.lines[k];
  const Line& line = p_.lines[li];
  if (line.event_count == 0) return;
  std::vector<const DeviceLines*> on_line;
  for (size_t di : xp.devices)
    if (std::find(devices_[di].lines.begin(), devices_[di].lines.end(), li) !=
        devices_[di].lines.end())
      on_line.push_back(&devices_[di]);
  // The device's own module line is written from its executions (modules_track).
  if (module_line && p_.str(line.name) == "XLA Modules") {
    s_.module_line_events += line.event_count;
    return;
  }
  int tid = kFirstLineTid + static_cast<int>(k);
  out_.thread(pid, tid, p_.str(line.name), /*derived=*/false);
  if (one_line_at_a_time_) p_.require_lines({li});
  const LineMemoryOps memory_op(p_, li);
  const Events& ev = p_.events;
  const EventSource& source = *p_.sources[line.source];
  for (uint32_t e = line.first_event; e < line.first_event + line.event_count; ++e) {
    // The pages read for the stats so far go back now and then: a busy host thread's bytes are
    // hundreds of megabytes, read about in file order (pages still to come fault in again).
    if (one_line_at_a_time_ && (e - line.first_event) % kReleaseEvents == kReleaseEvents - 1)
      source.release_line_bytes(p_, li);
    const DeviceLines* op_of = nullptr;
    for (const DeviceLines* d : on_line)
      if (d->counts(ev, e)) op_of = d;
    if (!op_of) {
      plain_event(xp.plane, e, pid, tid);
      ++(plane.kind == PlaneKind::kHostCpu ? s_.host_events : s_.other_device_events);
      continue;
    }
    SliceFlow flow;
    flow.in = line.kernel_ids ? flows_->into_kernel(plane.host, e) : 0;
    const ArrivalFlows::Ends arrival =
        arrivals_->at(static_cast<size_t>(op_of - devices_.data()), e);
    flow.arrival_out = arrival.out;
    flow.arrival_in = arrival.in;
    op_event(xp.plane, e, pid, tid, !memory_op.never() && memory_op(e) != MemoryOp::kNone, flow);
  }
  if (p_.str(line.name) == "_counters_")
    counter_tracks(xp.plane, line, pid, kFirstDeviceCounterTid + 1000 * static_cast<int>(k));
  if (one_line_at_a_time_) p_.forget_lines({li});
}

// A device's counters (a `_counters_` line: zero-length samples, their values as the events'
// own stats) also as counter tracks, one per counter and numeric stat, as XProf's trace viewer
// draws them. The samples stay on the line as slices too, so that the line reads back whole.
void PerfettoWriter::counter_tracks(uint32_t plane, const Line& line, int pid, int first_tid) {
  std::map<std::pair<std::string_view, std::string_view>, std::vector<std::pair<int64_t, double>>>
      series;
  const Events& ev = p_.events;
  for (uint32_t e = line.first_event; e < line.first_event + line.event_count; ++e)
    for (const Stat& st : p_.event_stats(plane, e))
      if (const std::optional<double> v = st.value.as_double())
        series[{p_.event_display_name(e), p_.str(st.name)}].push_back({ev.start_ps[e], *v});
  int tid = first_tid;
  for (auto& [key, points] : series) {
    std::stable_sort(points.begin(), points.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    out_.counter_track(pid, tid, key.first, key.second);
    for (const auto& [t, v] : points) out_.counter(pid, tid, t, v);
    s_.device_counter_points += points.size();
    ++s_.device_counter_tracks;
    ++tid;
  }
}

// The host's allocators: bytes in use after every allocation and free, one counter track each.
void PerfettoWriter::memory_tracks(uint32_t host, int pid) {
  int tid = kFirstCounterTid;
  for (const AllocatorMemory& a : memory_.allocators) {
    if (a.host != p_.hosts[host].name || a.timeline.empty()) continue;
    std::string name = "memory in use: " + a.allocator;
    if (!a.device.empty() && a.allocator.find(a.device) == std::string::npos)
      name += " (" + a.device + ")";
    out_.counter_track(pid, tid, name, "bytes");
    for (const MemoryPoint& m : a.timeline) out_.counter(pid, tid, m.time_ps, m.in_use);
    s_.counter_points += a.timeline.size();
    ++s_.counter_tracks;
    ++tid;
  }
}

// An op event: its op's name and args, its own stats, and a collective's bandwidth.
void PerfettoWriter::op_event(uint32_t plane, uint32_t e, int pid, int tid, bool memory,
                              SliceFlow flow) {
  const Events& ev = p_.events;
  const OpTexts::OpText& t = texts_.op_text(e, memory);
  int64_t d = ev.duration_ps[e];
  TraceArgs& args = op_args_;  // its strings' memory reused from event to event
  args = t.args;
  for (const Stat& st : p_.event_stats(plane, e))
    byte_stats_ += !args.set_stat(p_.str(st.name), st.value);
  if (t.collective && d > 0) {
    // GB/s = bytes / (ps * 1e-12) / 1e9 = bytes * 1000 / ps.
    double algbw = t.collective->traits.size_correction *
                   static_cast<double>(t.collective->message_bytes) * 1000.0 /
                   static_cast<double>(d);
    args.set("algbw_gbps", number(algbw));
    args.set("busbw_gbps", number(algbw * t.collective->traits.bus_factor));
    ++s_.collective_events;
  }
  out_.slice(pid, tid, t.name, t.name_json, ev.start_ps[e], d, &args, flow);
  s_.flows += flow.in != 0;
  s_.arrival_flows += flow.arrival_in != 0;
  ++s_.op_events;
}

// Any other event: its display name, its metadata name when that differs, and its stats; a
// launch starts the arrow to its kernel.
void PerfettoWriter::plain_event(uint32_t plane, uint32_t e, int pid, int tid) {
  const Events& ev = p_.events;
  TraceArgs& args = plain_args_;
  args.clear();
  texts_.base_args(e, args);
  if (p_.event_name(e) != p_.event_display_name(e))
    args.set("long_name", json_string_html_safe(p_.event_name(e)));
  uint64_t flow_out = 0;
  for (const Stat& st : p_.event_stats(plane, e)) {
    byte_stats_ += !args.set_stat(p_.str(st.name), st.value);
    if (st.name == correlation_name_)
      if (auto c = st.value.as_int()) flow_out = flows_->out_of_launch(p_.planes[plane].host, *c);
  }
  out_.slice(pid, tid, p_.event_display_name(e), {}, ev.start_ps[e], ev.duration_ps[e], &args,
             {flow_out, 0});
}

// What the trace leaves out, said once each with how much.
void PerfettoWriter::add_notes() {
  if (byte_stats_)
    s_.notes.push_back(fmt::format("{} byte-valued stats (opaque payloads) left out", byte_stats_));
  if (s_.module_line_events)
    s_.notes.push_back(
        fmt::format("{} events of XLA Modules lines written from the module executions they give",
                    s_.module_line_events));
  uint64_t plane_stats = 0;
  for (const Plane& plane : p_.planes) plane_stats += plane.stats.size();
  if (plane_stats)
    s_.notes.push_back(
        fmt::format("{} plane stats (device capabilities, ...) left out", plane_stats));
  if (memory_.events && s_.counter_tracks == 0)
    s_.notes.push_back("allocator events without bytes in use: no memory counter tracks");
}

}  // namespace

PerfettoSummary write_perfetto(const Profile& p, TraceSink& sink, const PerfettoOptions& options) {
  PerfettoSummary s;
  if (options.host_clocks.empty()) {
    PerfettoWriter(p, sink, s, options).write();
    return s;
  }
  s.notes.push_back(clock_alignment_note(options.host_clocks));
  ClockShiftSink aligned(sink, options.host_clocks);
  PerfettoWriter(p, aligned, s, options).write();
  return s;
}

PerfettoSummary write_perfetto(const Profile& p,
                               const std::function<void(std::string_view)>& sink) {
  JsonTraceSink json(sink);
  return write_perfetto(p, json);
}

TraceFormat trace_format_of(const std::string& path, TraceFormat asked) {
  if (asked != TraceFormat::kAuto) return asked;
  auto ends = [&](std::string_view tail) { return path.ends_with(tail); };
  return ends(".json") || ends(".json.gz") ? TraceFormat::kJson : TraceFormat::kProto;
}

PerfettoSummary write_perfetto_file(const Profile& profile, const std::string& path,
                                    TraceFormat format, const PerfettoOptions& options) {
  const bool proto = trace_format_of(path, format) == TraceFormat::kProto;
  auto write = [&](const std::function<void(std::string_view)>& piece) {
    if (!proto) {
      JsonTraceSink sink(piece);
      return write_perfetto(profile, sink, options);
    }
    ProtoTraceSink sink(piece, /*compress=*/!path.ends_with(".gz"));
    return write_perfetto(profile, sink, options);
  };
  return stream_to_file(path, write);
}

PerfettoSummary stream_to_file(
    const std::string& path,
    const std::function<PerfettoSummary(const std::function<void(std::string_view)>&)>& write) {
  if (path.ends_with(".gz")) {
    gzFile f = gzopen(path.c_str(), "wb6");
    if (!f) throw InputError(path, std::string("cannot write: ") + std::strerror(errno));
    bool ok = true;
    PerfettoSummary s = write([&](std::string_view piece) {
      if (ok && gzwrite(f, piece.data(), static_cast<unsigned>(piece.size())) !=
                    static_cast<int>(piece.size()))
        ok = false;
    });
    if (gzclose(f) != Z_OK || !ok) throw InputError(path, "write failed");
    return s;
  }
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) throw InputError(path, std::string("cannot write: ") + std::strerror(errno));
  bool ok = true;
  PerfettoSummary s = write([&](std::string_view piece) {
    if (ok && std::fwrite(piece.data(), 1, piece.size(), f) != piece.size()) ok = false;
  });
  if (std::fclose(f) != 0 || !ok) throw InputError(path, "write failed");
  return s;
}

}  // namespace jaxprof
