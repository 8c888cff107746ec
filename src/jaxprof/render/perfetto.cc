#include "jaxprof/render/perfetto.h"

#include <fmt/format.h>
#include <zlib.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <tuple>

#include "jaxprof/analysis/category.h"
#include "jaxprof/analysis/collectives.h"
#include "jaxprof/analysis/device_events.h"
#include "jaxprof/analysis/module_executions.h"
#include "jaxprof/analysis/timeline_segments.h"
#include "jaxprof/error.h"
#include "jaxprof/render/text.h"
#include "jaxprof/render/units.h"

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

constexpr int kCategoryTid = 1;
constexpr int kModulesTid = 2;
constexpr int kFirstLineTid = 10;

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

PerfettoSummary write_perfetto(const Profile& p,
                               const std::function<void(std::string_view)>& sink) {
  PerfettoSummary s;
  std::vector<DeviceLines> devices = op_devices(p);
  const std::vector<DeviceExecutions>& executions = module_executions(p);  // decodes device lines
  std::vector<DeviceSegments> segments = timeline_segments(p);
  std::map<std::string, const DeviceSegments*> segments_of;
  for (const DeviceSegments& d : segments) segments_of[d.device] = &d;

  // Collective message sizes and bandwidth factors per (module, op).
  // Every op event is exported, set apart from the steady state or not.
  CollectivesResult coll = compute_collectives(p, {.steady = {true, true}});
  std::map<std::pair<std::string, std::string>, const CollectiveOp*> collective;
  for (const CollectiveOp& c : coll.ops)
    if (c.message_bytes > 0) collective[{c.module, c.name}] = &c;
  if (collective.empty())
    s.notes.push_back(coll.ops.empty()
                          ? "no collectives in the profile: no bandwidth args"
                          : "collective message sizes unknown (no HLO in the profile): no "
                            "bandwidth args");

  Out out(sink);
  out(fmt::format(
      "{{\"displayTimeUnit\": \"ns\", \"otherData\": {{\"producer\": \"jaxprof\", "
      "\"base_ns\": {}, \"time_unit\": \"ts and dur are microseconds since base_ns, exact "
      "from integer picoseconds\"}}, \"traceEvents\": [\n"
      "{{\"ph\": \"M\", \"pid\": 0, \"tid\": 0, \"name\": \"process_name\", \"args\": "
      "{{\"name\": \"jaxprof\"}}}}",
      p.base_ns));

  // Per (metadata, hlo op, module): the event name and the args every such event shares.
  struct OpText {
    std::string name_json, args;
    const CollectiveOp* collective = nullptr;
  };
  std::map<std::tuple<uint32_t, StringId, uint32_t>, OpText> texts;
  auto op_text = [&](uint32_t plane, uint32_t e) -> const OpText& {
    const Events& ev = p.events;
    auto key = std::make_tuple(ev.metadata[e], ev.hlo_op[e], ev.module[e]);
    auto it = texts.find(key);
    if (it != texts.end()) return it->second;
    OpText t;
    const ModuleKey& mk = p.modules[ev.module[e]];
    std::string module(p.str(mk.name));
    std::string_view op = ev.hlo_op[e] ? p.str(ev.hlo_op[e]) : p.event_display_name(e);
    t.name_json = json_string_html_safe(op);
    std::string opcode, op_name, source;
    if (ev.hlo_op[e] != 0)
      if (const HloModule* mod = p.hlo.find(hlo_program_key(mk.program_id), module))
        if (const HloInstruction* instr = mod->find(op)) {
          opcode = std::string(instr->opcode);
          op_name = std::string(instr->op_name);
          source = mod->source_line(*instr);
        }
    OpCategory cat =
        opcode.empty() ? categorize({}, p.event_name(e)) : categorize(opcode, op, op_name);
    t.args = ", \"args\": {";
    t.args += fmt::format("\"hlo_op\": {}", json_string_html_safe(ev.hlo_op[e] ? op : ""));
    if (!module.empty()) t.args += fmt::format(", \"module\": {}", json_string_html_safe(module));
    if (p.event_name(e) != op)
      t.args += fmt::format(", \"kernel\": {}", json_string_html_safe(p.event_name(e)));
    if (!opcode.empty()) t.args += fmt::format(", \"opcode\": {}", json_string_html_safe(opcode));
    if (!op_name.empty())
      t.args += fmt::format(", \"op_name\": {}", json_string_html_safe(op_name));
    if (!source.empty()) t.args += fmt::format(", \"source\": {}", json_string_html_safe(source));
    t.args += fmt::format(", \"category\": \"{}\"", category_name(cat));
    auto c = collective.find({module, std::string(op)});
    if (c != collective.end()) {
      t.collective = c->second;
      t.args += fmt::format(", \"message_bytes\": {}, \"group_size\": {}", c->second->message_bytes,
                            c->second->group_size);
    }
    (void)plane;
    return texts.emplace(key, std::move(t)).first->second;
  };

  for (size_t di = 0; di < devices.size(); ++di) {
    const DeviceLines& dev = devices[di];
    auto seg = segments_of.find(dev.name);
    if (seg == segments_of.end()) continue;  // no op events
    ++s.devices;
    int pid = static_cast<int>(s.devices);
    const Plane& plane = p.planes[dev.plane];
    out(metadata_event(pid, 0, "process_name",
                       fmt::format("{} ({})", dev.name, p.hosts[plane.host].name)));
    out(sort_event(pid, 0, "process_sort_index", pid));
    out(metadata_event(pid, kCategoryTid, "thread_name", "category"));
    out(sort_event(pid, kCategoryTid, "thread_sort_index", kCategoryTid));
    for (const Segment& g : seg->second->segments) {
      out(complete_event(pid, kCategoryTid, fmt::format("\"{}\"", segment_kind_name(g.kind)),
                         g.interval.begin, g.interval.length(), ""));
      ++s.segments;
    }
    out(metadata_event(pid, kModulesTid, "thread_name", "modules"));
    out(sort_event(pid, kModulesTid, "thread_sort_index", kModulesTid));
    for (const ModuleExecution& x : executions[di].executions) {
      std::string args = fmt::format(
          ", \"args\": {{\"program_id\": {}, \"warmup\": {}",
          x.program_id == kNoProgram ? std::string("null") : std::to_string(x.program_id),
          x.warmup ? "true" : "false");
      if (x.run_id) args += fmt::format(", \"run_id\": {}", *x.run_id);
      args += fmt::format(", \"ops\": {}}}", x.events.size());
      out(complete_event(pid, kModulesTid, json_string_html_safe(x.name), x.start_ps,
                         x.duration_ps(), args));
      ++s.executions;
    }
    const Events& ev = p.events;
    for (size_t k = 0; k < dev.lines.size(); ++k) {
      const Line& line = p.lines[dev.lines[k]];
      int tid = kFirstLineTid + static_cast<int>(k);
      out(metadata_event(pid, tid, "thread_name",
                         p.str(line.display_name != 0 ? line.display_name : line.name)));
      out(sort_event(pid, tid, "thread_sort_index", tid));
      for (uint32_t e = line.first_event; e < line.first_event + line.event_count; ++e) {
        if (!dev.counts(ev, e)) continue;
        const OpText& t = op_text(dev.plane, e);
        int64_t d = ev.duration_ps[e];
        std::string args = t.args;
        if (t.collective && d > 0) {
          // GB/s = bytes / (ps * 1e-12) / 1e9 = bytes * 1000 / ps.
          double algbw = t.collective->traits.size_correction *
                         static_cast<double>(t.collective->message_bytes) * 1000.0 /
                         static_cast<double>(d);
          args += fmt::format(", \"algbw_gbps\": {}, \"busbw_gbps\": {}", number(algbw),
                              number(algbw * t.collective->traits.bus_factor));
          ++s.collective_events;
        }
        args += "}";
        out(complete_event(pid, tid, t.name_json, ev.start_ps[e], d, args));
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
