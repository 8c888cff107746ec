#include "jaxprof/render/summary_render.h"

#include <fmt/format.h>

#include "jaxprof/render/steady_state_render.h"
#include "jaxprof/render/units.h"

namespace jaxprof {

namespace {

std::string dur(double ps) { return human_duration(ps); }
std::string dur(int64_t ps) { return human_duration(static_cast<double>(ps)); }

std::string bytes(uint64_t b) {
  if (b == 0) return "?";
  if (b < 1024) return fmt::format("{} B", b);
  if (b < 1024 * 1024) return fmt::format("{:.1f} KiB", static_cast<double>(b) / 1024);
  if (b < 1024ull * 1024 * 1024)
    return fmt::format("{:.1f} MiB", static_cast<double>(b) / (1024.0 * 1024));
  return fmt::format("{:.2f} GiB", static_cast<double>(b) / (1024.0 * 1024 * 1024));
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
        "{}{{\"name\": {}, \"executions\": {}, \"warmup_executions\": {}, \"mean_ns\": {}, "
        "\"total_ns\": {}, \"share\": {}}}",
        i ? ", " : "", json_string(m.name), m.executions, m.warmup_executions, ps_to_ns(m.mean_ps),
        ps_to_ns_exact(m.total_ps), number(m.share));
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
        "{}{{\"name\": {}, \"module\": {}, \"opcode\": {}, \"group_size\": {}, "
        "\"message_bytes\": {}, \"count\": {}, \"total_ns\": {}, \"exposed_ns\": {}, "
        "\"exposed_per_execution_ns\": {}, \"busbw_gbps\": {}}}",
        i ? ", " : "", json_string(c.name), json_string(c.module), json_string(c.opcode),
        c.group_size, c.message_bytes, c.count, ps_to_ns_exact(c.total_ps),
        ps_to_ns_exact(c.exposed_ps), ps_to_ns(c.exposed_per_execution_ps), number(c.busbw_gbps));
  }
  out += fmt::format(
      "], \"bandwidth_convention\": {}, \"compile\": {{\"compiles\": {}, \"wall_ns\": {}, "
      "\"top_module\": {}, \"top_module_wall_ns\": {}, \"recompiled_modules\": {}}}, "
      "\"set_apart\": {}, \"observations\": [",
      json_string(r.bandwidth_convention), r.compile.compiles, ps_to_ns_exact(r.compile.wall_ps),
      json_string(r.compile.top_module), ps_to_ns_exact(r.compile.top_module_wall_ps),
      r.compile.recompiled_modules, render_set_apart_json(r.set_apart));
  for (size_t i = 0; i < r.observations.size(); ++i) {
    const Observation& o = r.observations[i];
    out += fmt::format("{}{{\"rule\": {}, \"text\": {}, \"time_ns\": {}, \"share\": {}}}",
                       i ? ", " : "", json_string(o.rule), json_string(o.text),
                       ps_to_ns_exact(o.time_ps), number(o.share));
  }
  out += "], \"warnings\": [";
  for (size_t i = 0; i < r.warnings.size(); ++i)
    out += fmt::format("{}{}", i ? ", " : "", json_string(r.warnings[i]));
  return out + "]}\n";
}

std::string table(const SummaryResult& r) {
  const SummaryDeviceTime& d = r.device;
  std::string out;
  if (d.devices == 0) return "no device op events found (try `jaxprof info`)\n";
  double n = d.devices;
  const int64_t steady = d.steady_span_ps();
  auto share = [&](int64_t ps) { return human_percent(steady ? ps / double(steady) : 0); };
  std::string span = dur(d.span_ps / n) + " span";
  if (d.set_apart_ps > 0)
    span +=
        fmt::format(" ({} steady state, {} set apart)", dur(steady / n), dur(d.set_apart_ps / n));
  out += fmt::format(
      "Devices: {} on {} host{}; per device {}, {} busy, idle {} ({} between modules, {} "
      "inside)\n",
      d.devices, r.hosts.size(), r.hosts.size() == 1 ? "" : "s", span, dur(d.busy_ps / n),
      share(d.idle_ps), share(d.idle_between_modules_ps), share(d.idle_in_modules_ps));
  out += fmt::format("  compute {}   exposed communication {}   exposed memcpy {}\n",
                     share(d.compute_ps), share(d.comm_exposed_ps), share(d.memcpy_exposed_ps));
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
    Table t({"module", "runs", "warm-up", "mean", "total", "share"},
            {false, true, true, true, true, true});
    for (const SummaryModule& m : r.modules)
      t.add({m.name, std::to_string(m.executions), std::to_string(m.warmup_executions),
             dur(m.mean_ps), dur(m.total_ps), human_percent(m.share)});
    out += t.render(48) + "\n";
  }
  if (!r.ops.empty()) {
    Table t({"op", "opcode", "module", "count", "self", "share", "source"},
            {false, false, false, true, true, true, false});
    for (const SummaryOp& o : r.ops)
      t.add({o.name, o.opcode, o.module, std::to_string(o.count), dur(o.self_ps),
             human_percent(o.share), o.source});
    out += t.render(48) + "\n";
  }
  if (!r.collectives.empty()) {
    Table t({"collective", "opcode", "N", "size", "count", "total", "exposed", "exposed/run",
             "busbw GB/s"},
            {false, false, true, true, true, true, true, true, true});
    for (const SummaryCollective& c : r.collectives)
      t.add({c.name, c.opcode, c.group_size ? std::to_string(c.group_size) : "?",
             bytes(c.message_bytes), std::to_string(c.count), dur(c.total_ps), dur(c.exposed_ps),
             dur(c.exposed_per_execution_ps),
             c.busbw_gbps > 0 ? fmt::format("{:.4g}", c.busbw_gbps) : ""});
    out += t.render(48) + "\n";
  }
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
    case OutputFormat::kCsv:  // one screen has no single table shape: JSON carries it all
    case OutputFormat::kTable:
      return table(result);
  }
  return {};
}

}  // namespace jaxprof
