#include "jaxprof/render/text/modules_render.h"

#include <fmt/format.h>

#include "jaxprof/common/units.h"

namespace jaxprof {

namespace {

std::string program(ProgramId id) { return id == kNoProgram ? std::string() : std::to_string(id); }

std::string steps_json(const StepsResult& r) {
  std::string out = fmt::format(
      "{{\"source\": {}, \"steady_steps\": {}, \"steady_mean_ns\": {}, "
      "\"steady_device_mean_ns\": {}, \"steps\": [",
      json_string(r.source), r.steady_steps, ps_to_ns(r.steady_mean_ps),
      ps_to_ns(r.steady_device_mean_ps));
  for (size_t i = 0; i < r.steps.size(); ++i) {
    const Step& s = r.steps[i];
    out += fmt::format(
        "{}{{\"number\": {}, \"name\": {}, \"start_ns\": {}, \"end_ns\": {}, "
        "\"duration_ns\": {}, \"windows\": {}, \"longest_window_ns\": {}, \"executions\": {}, "
        "\"device_ns\": {}, \"warmup\": {}, \"compiling\": {}, \"modules\": [",
        i ? ", " : "", s.number, json_string(s.name), ps_to_ns_exact(s.start_ps),
        ps_to_ns_exact(s.end_ps), ps_to_ns_exact(s.duration_ps()), s.windows,
        ps_to_ns_exact(s.longest_window_ps), s.executions, ps_to_ns_exact(s.device_ps),
        s.warmup ? "true" : "false", s.compiling ? "true" : "false");
    for (size_t k = 0; k < s.modules.size(); ++k) {
      const StepModule& m = s.modules[k];
      out += fmt::format(
          "{}{{\"name\": {}, \"program_id\": {}, \"executions\": {}, "
          "\"device_ns\": {}}}",
          k ? ", " : "", json_string(m.name),
          m.program_id == kNoProgram ? std::string("null") : std::to_string(m.program_id),
          m.executions, ps_to_ns_exact(m.device_ps));
    }
    out += "]}";
  }
  return out + "]}";
}

std::string steps_table(const StepsResult& r) {
  if (r.steps.empty()) return {};
  // Steps merged from several devices' windows: also the longest single window.
  bool merged = false;
  for (const Step& s : r.steps) merged = merged || s.windows > 1;
  std::vector<TableColumn> columns = {{"step", Measure::kLabel},
                                      {"name"},
                                      {"start", Measure::kDuration},
                                      {"duration", Measure::kDuration}};
  if (merged)
    columns.insert(columns.end(),
                   {{"windows", Measure::kCount}, {"longest window", Measure::kDuration}});
  columns.insert(
      columns.end(),
      {{"device time", Measure::kDuration}, {"runs", Measure::kCount}, {"warm-up"}, {"modules"}});
  Table t(std::move(columns));
  for (const Step& s : r.steps) {
    std::string mods;
    for (const StepModule& m : s.modules)
      mods += fmt::format("{}{} \xc3\x97{}", mods.empty() ? "" : ", ", m.name, m.executions);
    std::vector<Cell> row = {std::to_string(s.number), s.name, s.start_ps, s.duration_ps()};
    if (merged) row.insert(row.end(), {s.windows, s.longest_window_ps});
    row.insert(row.end(), {s.device_ps, s.executions, s.warmup ? "yes" : "", mods});
    t.add(std::move(row));
  }
  return "\nsteps (" + r.source + ")\n" + t.render(60) +
         fmt::format("steady state: {} steps, mean {} per step, {} device time per step\n",
                     r.steady_steps, human_duration(r.steady_mean_ps),
                     human_duration(r.steady_device_mean_ps));
}

std::string json(const ModulesResult& r) {
  std::string out = fmt::format("{{\"total_ns\": {}, \"modules\": [", ps_to_ns_exact(r.total_ps));
  for (size_t i = 0; i < r.modules.size(); ++i) {
    const ModuleStats& m = r.modules[i];
    out += fmt::format(
        "{}{{\"name\": {}, \"program_id\": {}, \"devices\": {}, \"executions\": {}, "
        "\"warmup_executions\": {}, \"total_ns\": {}, \"warmup_total_ns\": {}, \"mean_ns\": {}, "
        "\"std_ns\": {}, \"min_ns\": {}, \"max_ns\": {}, \"cv\": {}, \"share\": {}, "
        "\"ops_per_execution\": {}, \"autotuning\": {}, \"varying_ops\": [",
        i ? ", " : "", json_string(m.name),
        m.program_id == kNoProgram ? std::string("null") : std::to_string(m.program_id), m.devices,
        m.executions, m.warmup_executions, ps_to_ns_exact(m.total_ps),
        ps_to_ns_exact(m.warmup_total_ps), ps_to_ns(m.mean_ps), ps_to_ns(m.std_ps),
        ps_to_ns_exact(m.min_ps), ps_to_ns_exact(m.max_ps), number(m.cv), number(m.share),
        number(m.ops_per_execution), m.autotuning ? "true" : "false");
    for (size_t k = 0; k < m.varying_ops.size(); ++k) {
      const OpVariability& o = m.varying_ops[k];
      out += fmt::format(
          "{}{{\"name\": {}, \"executions\": {}, \"mean_ns\": {}, \"std_ns\": {}, "
          "\"cv\": {}}}",
          k ? ", " : "", json_string(o.name), o.count, ps_to_ns(o.mean_ps), ps_to_ns(o.std_ps),
          number(o.cv));
    }
    out += "]}";
  }
  out += "], \"steps\": " + steps_json(r.steps) + "}\n";
  return out;
}

std::string csv(const ModulesResult& r) {
  std::string out =
      "name,program_id,devices,executions,warmup_executions,total_ns,warmup_total_ns,mean_ns,"
      "std_ns,min_ns,max_ns,cv,share,ops_per_execution\n";
  for (const ModuleStats& m : r.modules)
    out += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", csv_field(m.name),
                       program(m.program_id), m.devices, m.executions, m.warmup_executions,
                       ps_to_ns_exact(m.total_ps), ps_to_ns_exact(m.warmup_total_ps),
                       ps_to_ns(m.mean_ps), ps_to_ns(m.std_ps), ps_to_ns_exact(m.min_ps),
                       ps_to_ns_exact(m.max_ps), number(m.cv), number(m.share),
                       number(m.ops_per_execution));
  return out;
}

std::string table(const ModulesResult& r) {
  if (r.modules.empty())
    return "no XLA module executions found (try `jaxprof ops` or `jaxprof info`)\n" +
           steps_table(r.steps);
  Table t({{"module"},
           {"program", Measure::kLabel},
           {"runs", Measure::kCount},
           {"warm-up", Measure::kCount},
           {"warm-up time", Measure::kDuration},
           {"mean", Measure::kDuration},
           {"std", Measure::kDuration},
           {"cv", Measure::kNumber},
           {"total", Measure::kDuration},
           {"share", Measure::kShare},
           {"ops/run", Measure::kNumber},
           {"most varying op (cv)"}});
  for (const ModuleStats& m : r.modules) {
    std::string varying;
    if (!m.varying_ops.empty())
      varying = fmt::format("{} ({})", m.varying_ops[0].name,
                            format_value(Measure::kNumber, m.varying_ops[0].cv));
    t.add({m.name, m.program_id == kNoProgram ? Cell::unknown() : Cell::id(m.program_id),
           m.executions, m.warmup_executions, m.warmup_total_ps, m.mean_ps, m.std_ps, m.cv,
           m.total_ps, m.share, m.ops_per_execution, varying});
  }
  return t.render(40) +
         "\nmean/std/cv over steady-state runs (warm-up = first run of a program on a device, "
         "compiled in the capture)\n" +
         steps_table(r.steps);
}

}  // namespace

std::string render_modules(const ModulesResult& result, OutputFormat format) {
  return render_in(format, result, json, csv, table);
}

}  // namespace jaxprof
