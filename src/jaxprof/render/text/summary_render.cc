#include "jaxprof/render/text/summary_render.h"

#include <fmt/format.h>

#include "jaxprof/common/units.h"
#include "jaxprof/render/text/name_collisions.h"
#include "jaxprof/render/text/steady_state_render.h"

namespace jaxprof {

namespace {

std::string dur(double ps) { return human_duration(ps); }
std::string dur(int64_t ps) { return human_duration(static_cast<double>(ps)); }

double share_of(int64_t part, int64_t whole) {
  return whole > 0 ? static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

std::string critical_path_json(const CriticalPathDigest& d) {
  if (!d.available()) return "{\"unavailable\": " + json_string(d.unavailable) + "}";
  const CriticalStep& s = d.step;
  std::string out = fmt::format(
      "{{\"unavailable\": null, \"step_source\": {}, \"steps\": {}, \"steady_steps\": {}, "
      "\"step\": {}, \"step_name\": {}, \"warmup\": {}, \"step_ns\": {}, \"critical_ns\": {{",
      json_string(d.step_source), d.steps, d.counted, s.number, json_string(s.name),
      s.warmup ? "true" : "false", ps_to_ns_exact(s.step_ps));
  for (size_t i = 0; i < s.critical_ps.size(); ++i)
    out += fmt::format("{}{}: {}", i ? ", " : "", json_string(s.critical_ps[i].first),
                       ps_to_ns_exact(s.critical_ps[i].second));
  out += fmt::format("}}, \"ops_total\": {}, \"ops\": [", s.ops_total);
  for (size_t i = 0; i < s.ops.size(); ++i) {
    const PathOp& o = s.ops[i];
    out += fmt::format(
        "{}{{\"name\": {}, \"category\": {}, \"on_path_ns\": {}, \"on_path_share\": {}, "
        "\"slack_ns\": {}}}",
        i ? ", " : "", json_string(o.name), json_string(o.category), ps_to_ns_exact(o.on_path_ps),
        number(share_of(o.on_path_ps, s.step_ps)), ps_to_ns_exact(o.slack_ps));
  }
  return out + "]}";
}

// Kept to a few lines: what the median step's time went to, and the ops that held it.
std::string critical_path_table(const CriticalPathDigest& d) {
  if (!d.available()) return "Critical path: unavailable: " + d.unavailable + "\n";
  const CriticalStep& s = d.step;
  const bool steady = !s.warmup;  // every step warm-up: the median of them all
  std::string out =
      fmt::format("Critical path, median {}step {} (of {}{}; {}):", steady ? "steady " : "",
                  s.number, d.counted, steady ? " steady" : "", dur(s.step_ps));
  for (size_t i = 0; i < s.critical_ps.size() && i < 5; ++i)
    out += fmt::format("{} {} {}", i ? "," : "", s.critical_ps[i].first,
                       human_percent(share_of(s.critical_ps[i].second, s.step_ps)));
  out += "\n";
  Table t({{"op on the path"},
           {"category"},
           {"on path", Measure::kDuration},
           {"share", Measure::kShare},
           {"slack", Measure::kDuration}});
  size_t rows = 0;
  for (const PathOp& o : s.ops) {
    if (o.on_path_ps <= 0) continue;  // ops off the path: their slack is the command's detail
    t.add({o.name, o.category, o.on_path_ps, share_of(o.on_path_ps, s.step_ps), o.slack_ps});
    ++rows;
  }
  if (rows > 0) out += t.render(48);
  return out;
}

std::string json(const SummaryResult& r) {
  const SummaryDeviceTime& d = r.device;
  std::string out = "{\"hosts\": [";
  for (size_t i = 0; i < r.hosts.size(); ++i)
    out += fmt::format("{}{}", i ? ", " : "", json_string(r.hosts[i]));
  out += fmt::format(
      "], \"device\": {{\"devices\": {}, \"executions\": {}, \"span_ns\": {}, "
      "\"set_apart_ns\": {}, \"busy_ns\": {}, \"compute_ns\": {}, "
      "\"comm_exposed_ns\": {}, \"memcpy_exposed_ns\": {}, \"idle_ns\": {}, "
      "\"idle_in_modules_ns\": {}, \"idle_between_modules_ns\": {}, \"idle_share\": {}}}",
      d.devices, d.executions, ps_to_ns_exact(d.span_ps), ps_to_ns_exact(d.set_apart_ps),
      ps_to_ns_exact(d.busy_ps), ps_to_ns_exact(d.compute_ps), ps_to_ns_exact(d.comm_exposed_ps),
      ps_to_ns_exact(d.memcpy_exposed_ps), ps_to_ns_exact(d.idle_ps),
      ps_to_ns_exact(d.idle_in_modules_ps), ps_to_ns_exact(d.idle_between_modules_ps),
      number(d.idle_share));
  out += ", \"modules\": [";
  for (size_t i = 0; i < r.modules.size(); ++i) {
    const SummaryModule& m = r.modules[i];
    out += fmt::format(
        "{}{{\"name\": {}, \"program_id\": {}, \"executions\": {}, \"warmup_executions\": {}, "
        "\"mean_ns\": {}, \"total_ns\": {}, \"share\": {}}}",
        i ? ", " : "", json_string(m.name),
        m.program_id == kNoProgram ? std::string("null") : std::to_string(m.program_id),
        m.executions, m.warmup_executions, ps_to_ns(m.mean_ps), ps_to_ns_exact(m.total_ps),
        number(m.share));
  }
  out += "], \"ops\": [";
  for (size_t i = 0; i < r.ops.size(); ++i) {
    const SummaryOp& o = r.ops[i];
    out += fmt::format(
        "{}{{\"name\": {}, \"module\": {}, \"opcode\": {}, \"op_name\": {}, \"source\": {}, "
        "\"count\": {}, \"total_ns\": {}, \"self_ns\": {}, \"share\": {}}}",
        i ? ", " : "", json_string(o.name), json_string(o.module), json_string(o.opcode),
        json_string(o.op_name), json_string(o.source), o.count, ps_to_ns_exact(o.total_ps),
        ps_to_ns_exact(o.self_ps), number(o.share));
  }
  out += "], \"collectives\": [";
  for (size_t i = 0; i < r.collectives.size(); ++i) {
    const SummaryCollective& c = r.collectives[i];
    out += fmt::format(
        "{}{{\"name\": {}, \"module\": {}, \"program_id\": {}, \"opcode\": {}, "
        "\"group_size\": {}, \"message_bytes\": {}, \"count\": {}, \"total_ns\": {}, "
        "\"exposed_ns\": {}, \"exposed_per_execution_ns\": {}, \"busbw_gbps\": {}}}",
        i ? ", " : "", json_string(c.name), json_string(c.module),
        c.program_id == kNoProgram ? std::string("null") : std::to_string(c.program_id),
        json_string(c.opcode), c.group_size, c.message_bytes, c.count, ps_to_ns_exact(c.total_ps),
        ps_to_ns_exact(c.exposed_ps), ps_to_ns(c.exposed_per_execution_ps), number(c.busbw_gbps));
  }
  out += fmt::format(
      "], \"bandwidth_convention\": {}, \"op_duration_clock\": {}, \"compile\": {{\"compiles\": "
      "{}, \"wall_ns\": {}, \"top_module\": {}, \"top_module_wall_ns\": {}, "
      "\"recompiled_modules\": {}}}, \"set_apart\": {}, \"observations\": [",
      json_string(r.bandwidth_convention), json_string(duration_clock_name(r.duration_clock)),
      r.compile.compiles, ps_to_ns_exact(r.compile.wall_ps), json_string(r.compile.top_module),
      ps_to_ns_exact(r.compile.top_module_wall_ps), r.compile.recompiled_modules,
      render_set_apart_json(r.set_apart));
  for (size_t i = 0; i < r.observations.size(); ++i) {
    const Observation& o = r.observations[i];
    out += fmt::format("{}{{\"rule\": {}, \"text\": {}, \"time_ns\": {}, \"share\": {}}}",
                       i ? ", " : "", json_string(o.rule), json_string(o.text),
                       ps_to_ns_exact(o.time_ps), number(o.share));
  }
  out += "], \"critical_path\": " + critical_path_json(r.critical_path);
  out += ", \"warnings\": " + json_string_array(r.warnings);
  return out + "}\n";
}

std::string table(const SummaryResult& r) {
  const SummaryDeviceTime& d = r.device;
  std::string out;
  if (d.devices == 0) return "no device op events found (try `jaxprof info`)\n";
  double n = d.devices;
  const int64_t steady = d.steady_span_ps();
  std::string span = dur(d.span_ps / n) + " span";
  if (d.set_apart_ps > 0)
    span +=
        fmt::format(" ({} steady state, {} set apart)", dur(steady / n), dur(d.set_apart_ps / n));
  out += fmt::format(
      "Devices: {} on {} host{}; per device {}, {} busy, idle {} ({} between modules, {} "
      "inside)\n",
      d.devices, r.hosts.size(), r.hosts.size() == 1 ? "" : "s", span, dur(d.busy_ps / n),
      human_percent(d.idle_share), human_percent(d.idle_between_modules_share),
      human_percent(d.idle_in_modules_share));
  out += fmt::format("  compute {}   exposed communication {}   exposed memcpy {}\n",
                     human_percent(d.compute_share), human_percent(d.comm_exposed_share),
                     human_percent(d.memcpy_exposed_share));
  if (std::string line = render_set_apart_line(r.set_apart); !line.empty())
    out += "  " + line + "\n";
  out += "\n";
  if (!r.observations.empty()) {
    out += "Observations\n";
    for (size_t i = 0; i < r.observations.size(); ++i)
      out += fmt::format("  {}. {}\n", i + 1, r.observations[i].text);
    out += "\n";
  }
  if (!r.modules.empty()) {
    Table t({{"module"},
             {"runs", Measure::kCount},
             {"warm-up", Measure::kCount},
             {"mean", Measure::kDuration},
             {"total", Measure::kDuration},
             {"share", Measure::kShare}});
    std::vector<std::string> names, tellers;
    for (const SummaryModule& m : r.modules) {
      names.push_back(m.name);
      tellers.push_back(
          program_teller(m.program_id == kNoProgram ? "" : std::to_string(m.program_id)));
    }
    names = tell_apart(names, tellers);  // five programs named jit_dot read apart
    for (size_t i = 0; i < r.modules.size(); ++i) {
      const SummaryModule& m = r.modules[i];
      t.add({names[i], m.executions, m.warmup_executions, m.mean_ps, m.total_ps, m.share});
    }
    out += t.render(48) + "\n";
  }
  if (!r.ops.empty()) {
    Table t({{"op"},
             {"opcode"},
             {"module"},
             {"count", Measure::kCount},
             {"self", Measure::kDuration},
             {"share", Measure::kShare},
             {"source"}});
    for (const SummaryOp& o : r.ops)
      t.add({o.name, o.opcode, o.module, o.count, o.self_ps, o.share, o.source});
    out += t.render(48) + "\n";
  }
  if (!r.collectives.empty()) {
    Table t({{"collective"},
             {"opcode"},
             {"N", Measure::kCount},
             {"size", Measure::kBytes},
             {"count", Measure::kCount},
             {"total", Measure::kDuration},
             {"exposed", Measure::kDuration},
             {"exposed/run", Measure::kDuration},
             {"busbw", Measure::kBandwidth}});
    auto known = [](auto v) { return v > 0 ? Cell(static_cast<double>(v)) : Cell::unknown(); };
    std::vector<std::string> labels, tellers;
    for (const SummaryCollective& c : r.collectives) {
      labels.push_back(c.name + "\n" + c.module);
      tellers.push_back(
          program_teller(c.program_id == kNoProgram ? "" : std::to_string(c.program_id)));
    }
    const std::vector<std::string> apart = tell_apart(labels, tellers);
    for (size_t ci = 0; ci < r.collectives.size(); ++ci) {
      const SummaryCollective& c = r.collectives[ci];
      t.add({c.name + apart[ci].substr(labels[ci].size()), c.opcode, known(c.group_size),
             known(c.message_bytes), c.count, c.total_ps, c.exposed_ps, c.exposed_per_execution_ps,
             c.message_bytes > 0 ? Cell(c.busbw_gbps) : Cell::unknown()});
    }
    out += t.render(48) + "\n";
  }
  out += critical_path_table(r.critical_path) + "\n";
  if (r.compile.compiles > 0)
    out += fmt::format("Compile: {} compile{}, {} wall; most in {} ({})\n", r.compile.compiles,
                       r.compile.compiles == 1 ? "" : "s", dur(r.compile.wall_ps),
                       r.compile.top_module.empty() ? "(unknown)" : r.compile.top_module,
                       dur(r.compile.top_module_wall_ps));
  else
    out += "Compile: no compile events in the capture\n";
  return out;
}

}  // namespace

std::string render_summary(const SummaryResult& result, OutputFormat format) {
  switch (format) {
    case OutputFormat::kJson:
      return json(result);
    case OutputFormat::kCsv:  // refused by the CLI: one screen has no single table shape
    case OutputFormat::kTable:
      return table(result);
  }
  return {};
}

}  // namespace jaxprof
