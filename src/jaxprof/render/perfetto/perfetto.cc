#include "jaxprof/render/perfetto/perfetto.h"

#include <fmt/format.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <tuple>

#include "jaxprof/analysis/ops/category.h"
#include "jaxprof/analysis/collectives/collectives.h"
#include "jaxprof/analysis/compile/compile.h"
#include "jaxprof/analysis/ops/device_events.h"
#include "jaxprof/analysis/ops/memory_op.h"
#include "jaxprof/analysis/steps/module_executions.h"
#include "jaxprof/analysis/steps/steady_state.h"
#include "jaxprof/analysis/timeline/timeline_segments.h"
#include "jaxprof/common/error.h"
#include "jaxprof/io/base64.h"
#include "jaxprof/render/perfetto/perfetto_args.h"
#include "jaxprof/render/text/text.h"
#include "jaxprof/common/units.h"

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

// Line tids start after the derived tracks of every device of the plane (two per device).
constexpr int kFirstLineTid = 1000;

// Buffers output and hands it to the sink in large pieces.
class Out {
 public:
  explicit Out(const std::function<void(std::string_view)>& sink) : sink_(sink) {}
  ~Out() { flush(); }
  void operator()(std::string_view s) {
    buf_ += s;
    if (buf_.size() >= (1u << 20)) flush();
  }
  void flush() {
    if (!buf_.empty()) sink_(buf_);
    buf_.clear();
  }

 private:
  const std::function<void(std::string_view)>& sink_;
  std::string buf_;
};

std::string metadata_event(int pid, int tid, const char* what, std::string_view name) {
  return fmt::format(
      ",\n{{\"ph\": \"M\", \"pid\": {}, \"tid\": {}, \"name\": \"{}\", \"args\": {{\"name\": "
      "{}}}}}",
      pid, tid, what, json_string_html_safe(name));
}

std::string sort_event(int pid, int tid, const char* what, int index) {
  return fmt::format(
      ",\n{{\"ph\": \"M\", \"pid\": {}, \"tid\": {}, \"name\": \"{}\", "
      "\"args\": {{\"sort_index\": {}}}}}",
      pid, tid, what, index);
}

std::string complete_event(int pid, int tid, std::string_view name_json, int64_t start_ps,
                           int64_t dur_ps, std::string_view args) {
  return fmt::format(
      ",\n{{\"ph\": \"X\", \"pid\": {}, \"tid\": {}, \"name\": {}, \"ts\": {}, \"dur\": {}{}}}",
      pid, tid, name_json, ps_to_us_exact(start_ps), ps_to_us_exact(dur_ps), args);
}

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

}  // namespace

PerfettoSummary write_perfetto(const Profile& p,
                               const std::function<void(std::string_view)>& sink) {
  PerfettoSummary s;
  std::vector<DeviceLines> devices = op_devices(p);
  const std::vector<DeviceExecutions>& executions = module_executions(p);  // decodes device lines
  const SteadyStateOptions steady_default;
  const SteadyState& steady = steady_state(p, steady_default);
  std::vector<DeviceSegments> segments = timeline_segments(p, steady_default);
  std::map<std::string, const DeviceSegments*> segments_of;
  for (const DeviceSegments& d : segments) segments_of[d.device] = &d;

  // Collective message sizes and bandwidth factors per (module, op). Every op event is exported,
  // set apart from the steady state or not.
  CollectivesResult coll = compute_collectives(p, {.steady = {true, true}});
  std::map<std::pair<std::string, std::string>, const CollectiveOp*> collective;
  for (const CollectiveOp& c : coll.ops)
    if (c.message_bytes > 0) collective[{c.module, c.name}] = &c;
  if (collective.empty())
    s.notes.push_back(coll.ops.empty()
                          ? "no collectives in the profile: no bandwidth args"
                          : "collective message sizes unknown (no HLO in the profile): no "
                            "bandwidth args");

  // Host threads: the events of compile windows (compile and the steady state read them), and
  // the name of every host thread with events, so that the trace read back has host threads
  // where the profile has them (whether it does decides the warm-up rule, module_executions.h).
  CompileResult compiles = compute_compile(p, {.top_steps = 1, .totals_only = true});
  std::vector<std::vector<Interval>> compiling(p.hosts.size());
  for (const CompileRecord& c : compiles.compiles)
    for (size_t h = 0; h < p.hosts.size(); ++h)
      if (p.hosts[h].name == c.host) compiling[h].push_back({c.start_ps, c.start_ps + c.wall_ps});
  for (auto& v : compiling) merge_intervals(v);
  std::vector<uint32_t> host_lines;
  for (const Plane& plane : p.planes)
    if (plane.kind == PlaneKind::kHostCpu && !compiling[plane.host].empty())
      host_lines.insert(host_lines.end(), plane.lines.begin(), plane.lines.end());
  p.require_lines(host_lines);

  // Planes in profile order: device planes, and host planes with threads.
  std::vector<ExportedPlane> planes;
  std::map<uint32_t, size_t> plane_slot;
  for (uint32_t pi = 0; pi < p.planes.size(); ++pi) {
    const Plane& plane = p.planes[pi];
    bool host = plane.kind == PlaneKind::kHostCpu &&
                std::any_of(plane.lines.begin(), plane.lines.end(),
                            [&](uint32_t li) { return p.lines[li].event_count > 0; });
    bool device = false;
    for (const DeviceLines& d : devices) device |= d.plane == pi;
    if (!host && !device) continue;
    plane_slot[pi] = planes.size();
    planes.push_back({pi, {}});
  }
  for (size_t di = 0; di < devices.size(); ++di)
    planes[plane_slot[devices[di].plane]].devices.push_back(di);

  Out out(sink);
  out(fmt::format(
      "{{\"displayTimeUnit\": \"ns\", \"otherData\": {{\"producer\": \"jaxprof\", "
      "\"base_ns\": {}, \"time_unit\": \"ts and dur are microseconds since base_ns, exact "
      "from integer picoseconds\"}}, \"traceEvents\": [\n"
      "{{\"ph\": \"M\", \"pid\": 0, \"tid\": 0, \"name\": \"process_name\", \"args\": "
      "{{\"name\": \"jaxprof\"}}}}",
      p.base_ns));
  // The HLO the analyses read, so that the trace read back tells the same story.
  for (const auto& m : p.hlo.modules()) {
    if (m->serialized.empty()) continue;
    out(fmt::format(
        ",\n{{\"ph\": \"M\", \"pid\": 0, \"tid\": 0, \"name\": \"jaxprof_hlo_proto\", \"args\": "
        "{{\"program_id\": {}, \"module\": {}, \"bare_module\": {}, \"proto\": \"",
        m->program_id == HloIndex::kUnknownProgramId ? std::string("null")
                                                     : std::to_string(m->program_id),
        json_string_html_safe(m->name), m->bare_module ? "true" : "false"));
    out(base64_encode(m->serialized));
    out("\"}}");
    ++s.hlo_modules;
  }

  // Per event metadata: the args every event of it shares (stats of the metadata entry).
  std::map<uint32_t, std::vector<Stat>> metadata_stats;
  // Per (metadata, hlo op, module): the event name and the derived args of an op.
  struct OpText {
    std::string name_json;
    TraceArgs args;
    const CollectiveOp* collective = nullptr;
  };
  // `memory`: the event's own stats or line say it is a copy or fill (memory_op.h).
  std::map<std::tuple<uint32_t, StringId, uint32_t, bool>, OpText> texts;
  const Events& ev = p.events;
  auto base_args = [&](uint32_t e, TraceArgs& args) {
    uint32_t mi = ev.metadata[e];
    auto it = metadata_stats.find(mi);
    if (it == metadata_stats.end()) it = metadata_stats.emplace(mi, p.metadata_stats(mi)).first;
    for (const Stat& st : it->second) args.set_stat(p.str(st.name), st.value);
    if (ev.hlo_op[e] != 0) args.set("hlo_op", json_string_html_safe(p.str(ev.hlo_op[e])));
    if (ev.module[e] != 0) {
      const ModuleKey& mk = p.modules[ev.module[e]];
      args.set("hlo_module", json_string_html_safe(p.str(mk.name)));
      if (mk.program_id != kNoProgram) args.set("program_id", program_json(mk.program_id));
    }
  };
  auto op_text = [&](uint32_t e, bool memory) -> const OpText& {
    auto key = std::make_tuple(ev.metadata[e], ev.hlo_op[e], ev.module[e], memory);
    auto it = texts.find(key);
    if (it != texts.end()) return it->second;
    OpText t;
    const ModuleKey& mk = p.modules[ev.module[e]];
    std::string module(p.str(mk.name));
    std::string_view op = ev.hlo_op[e] ? p.str(ev.hlo_op[e]) : p.event_display_name(e);
    t.name_json = json_string_html_safe(op);
    std::string opcode, op_name, source;
    OpCategory cat = OpCategory::kOther;
    bool from_hlo = false;
    if (ev.hlo_op[e] != 0)
      if (const HloModule* mod = p.hlo.find(hlo_program_key(mk.program_id), module))
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
      cat = categorize({}, p.event_name(e));
    base_args(e, t.args);
    if (!module.empty()) t.args.set("module", json_string_html_safe(module));
    if (p.event_name(e) != op) {
      t.args.set("kernel", json_string_html_safe(p.event_name(e)));
      t.args.set("long_name", json_string_html_safe(p.event_name(e)));
    }
    if (!opcode.empty()) t.args.set("opcode", json_string_html_safe(opcode));
    if (!op_name.empty()) t.args.set("op_name", json_string_html_safe(op_name));
    if (!source.empty()) t.args.set("source", json_string_html_safe(source));
    t.args.set("category", fmt::format("\"{}\"", category_name(cat)));
    auto c = collective.find({module, std::string(op)});
    if (c != collective.end()) {
      t.collective = c->second;
      t.args.set("message_bytes", std::to_string(c->second->message_bytes));
      t.args.set("group_size", std::to_string(c->second->group_size));
    }
    return texts.emplace(key, std::move(t)).first->second;
  };
  // Any other event: its display name, its metadata name when that differs, and its stats.
  auto plain_event = [&](uint32_t plane, uint32_t e, int pid, int tid) {
    TraceArgs args;
    base_args(e, args);
    if (p.event_name(e) != p.event_display_name(e))
      args.set("long_name", json_string_html_safe(p.event_name(e)));
    for (const Stat& st : p.event_stats(plane, e)) args.set_stat(p.str(st.name), st.value);
    out(complete_event(pid, tid, json_string_html_safe(p.event_display_name(e)), ev.start_ps[e],
                       ev.duration_ps[e], args.render()));
  };

  int pid = 0;
  for (const ExportedPlane& xp : planes) {
    const Plane& plane = p.planes[xp.plane];
    ++pid;
    const std::string& host = p.hosts[plane.host].name;
    out(fmt::format(
        ",\n{{\"ph\": \"M\", \"pid\": {}, \"tid\": 0, \"name\": \"process_name\", \"args\": "
        "{{\"name\": {}, \"host\": {}}}}}",
        pid, json_string_html_safe(p.str(plane.name)), json_string_html_safe(host)));
    out(fmt::format(
        ",\n{{\"ph\": \"M\", \"pid\": {}, \"tid\": 0, \"name\": \"process_labels\", \"args\": "
        "{{\"labels\": {}}}}}",
        pid, json_string_html_safe(host)));
    out(sort_event(pid, 0, "process_sort_index", pid));

    // Derived tracks (marked so that a reader of the trace leaves them out), and the module
    // executions as an "XLA Modules" line (where module_executions reads them back) on devices
    // that are not CPU ones.
    int tid = 0;
    bool module_line = false;
    for (size_t di : xp.devices) {
      const DeviceLines& dev = devices[di];
      auto seg = segments_of.find(dev.name);
      if (seg == segments_of.end()) continue;  // no op events
      // A device that is not its plane (the CPU backend's) names itself on its tracks.
      const bool own = dev.name == p.str(plane.name);
      ++s.devices;
      ++tid;
      out(fmt::format(
          ",\n{{\"ph\": \"M\", \"pid\": {}, \"tid\": {}, \"name\": \"thread_name\", \"args\": "
          "{{\"name\": {}, \"jaxprof_derived\": true}}}}",
          pid, tid, json_string_html_safe(own ? "category" : "category " + dev.name)));
      out(sort_event(pid, tid, "thread_sort_index", tid));
      for (const Segment& g : seg->second->segments) {
        out(complete_event(pid, tid, fmt::format("\"{}\"", segment_kind_name(g.kind)),
                           g.interval.begin, g.interval.length(), ""));
        ++s.segments;
      }
      ++tid;
      if (dev.hlo_ops_only)
        out(fmt::format(
            ",\n{{\"ph\": \"M\", \"pid\": {}, \"tid\": {}, \"name\": \"thread_name\", \"args\": "
            "{{\"name\": {}, \"jaxprof_derived\": true}}}}",
            pid, tid, json_string_html_safe(own ? "modules" : "modules " + dev.name)));
      else
        out(metadata_event(pid, tid, "thread_name", "XLA Modules"));
      module_line |= !dev.hlo_ops_only;
      out(sort_event(pid, tid, "thread_sort_index", tid));
      const DeviceExecutions& dx = executions[di];
      for (size_t k = 0; k < dx.executions.size(); ++k) {
        const ModuleExecution& x = dx.executions[k];
        TraceArgs args;
        args.set("hlo_module", json_string_html_safe(x.name));
        if (x.program_id != kNoProgram) args.set("program_id", program_json(x.program_id));
        args.set("warmup", x.warmup ? "true" : "false");
        args.set("role", fmt::format("\"{}\"", execution_role_name(steady.roles[di][k])));
        if (x.run_id) args.set("run_id", std::to_string(*x.run_id));
        args.set("ops", std::to_string(x.events.size()));
        out(complete_event(pid, tid, json_string_html_safe(execution_label(x)), x.start_ps,
                           x.duration_ps(), args.render()));
        ++s.executions;
      }
    }

    // The plane's lines: the devices' op events, and on host threads the compile windows'.
    const std::vector<Interval>& windows =
        plane.kind == PlaneKind::kHostCpu ? compiling[plane.host] : std::vector<Interval>{};
    for (size_t k = 0; k < plane.lines.size(); ++k) {
      uint32_t li = plane.lines[k];
      const Line& line = p.lines[li];
      if (line.event_count == 0) continue;
      std::vector<const DeviceLines*> on_line;
      for (size_t di : xp.devices)
        if (std::find(devices[di].lines.begin(), devices[di].lines.end(), li) !=
            devices[di].lines.end())
          on_line.push_back(&devices[di]);
      // The device's own module line is written from its executions above.
      if (module_line && p.str(line.name) == "XLA Modules") continue;
      int line_tid = kFirstLineTid + static_cast<int>(k);
      bool named = false;
      auto name_line = [&] {
        out(metadata_event(pid, line_tid, "thread_name", p.str(line.name)));
        out(sort_event(pid, line_tid, "thread_sort_index", line_tid));
        named = true;
      };
      if (on_line.empty() && windows.empty()) {
        if (plane.kind == PlaneKind::kHostCpu) name_line();  // a host thread, without its events
        continue;
      }
      const LineMemoryOps memory_op(p, li);
      size_t w = 0;
      for (uint32_t e = line.first_event; e < line.first_event + line.event_count; ++e) {
        const DeviceLines* op_of = nullptr;
        for (const DeviceLines* d : on_line)
          if (d->counts(ev, e)) op_of = d;
        bool in_window = false;
        if (!op_of && !windows.empty()) {
          while (w < windows.size() && windows[w].end <= ev.start_ps[e]) ++w;
          // Events start in order; one that began before a window may still reach into it.
          for (size_t v = w > 0 ? w - 1 : 0; v < windows.size() && !in_window; ++v) {
            if (windows[v].begin > ev.end_ps(e)) break;
            in_window = ev.start_ps[e] < windows[v].end && ev.end_ps(e) > windows[v].begin;
          }
        }
        if (!op_of && !in_window) continue;
        if (!named) name_line();
        if (!op_of) {
          plain_event(xp.plane, e, pid, line_tid);
          ++s.host_events;
          continue;
        }
        const OpText& t = op_text(e, !memory_op.never() && memory_op(e) != MemoryOp::kNone);
        int64_t d = ev.duration_ps[e];
        TraceArgs args = t.args;
        for (const Stat& st : p.event_stats(xp.plane, e)) args.set_stat(p.str(st.name), st.value);
        if (t.collective && d > 0) {
          // GB/s = bytes / (ps * 1e-12) / 1e9 = bytes * 1000 / ps.
          double algbw = t.collective->traits.size_correction *
                         static_cast<double>(t.collective->message_bytes) * 1000.0 /
                         static_cast<double>(d);
          args.set("algbw_gbps", number(algbw));
          args.set("busbw_gbps", number(algbw * t.collective->traits.bus_factor));
          ++s.collective_events;
        }
        out(complete_event(pid, line_tid, t.name_json, ev.start_ps[e], d, args.render()));
        ++s.op_events;
      }
    }
  }
  out("\n]}\n");
  out.flush();
  return s;
}

PerfettoSummary write_perfetto_file(const Profile& profile, const std::string& path) {
  bool gz = path.size() >= 3 && path.compare(path.size() - 3, 3, ".gz") == 0;
  if (gz) {
    gzFile f = gzopen(path.c_str(), "wb6");
    if (!f) throw InputError(path, std::string("cannot write: ") + std::strerror(errno));
    bool ok = true;
    PerfettoSummary s = write_perfetto(profile, [&](std::string_view piece) {
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
  PerfettoSummary s = write_perfetto(profile, [&](std::string_view piece) {
    if (ok && std::fwrite(piece.data(), 1, piece.size(), f) != piece.size()) ok = false;
  });
  if (std::fclose(f) != 0 || !ok) throw InputError(path, "write failed");
  return s;
}

}  // namespace jaxprof
