#include "jaxprof/render/text/compile_render.h"

#include <fmt/format.h>

#include "jaxprof/common/units.h"

namespace jaxprof {

namespace {

std::string phases_json(const std::vector<CompilePhaseTime>& phases) {
  std::string out = "[";
  for (size_t i = 0; i < phases.size(); ++i)
    out += fmt::format("{}{{\"phase\": {}, \"wall_ns\": {}, \"thread_ns\": {}}}", i ? ", " : "",
                       json_string(compile_phase_name(phases[i].phase)),
                       ps_to_ns_exact(phases[i].wall_ps), ps_to_ns_exact(phases[i].thread_ps));
  return out + "]";
}

// `, "program_id": N` where known.
std::string program_json(ProgramId id) {
  return id == kNoProgram ? "" : fmt::format(", \"program_id\": {}", id);
}

std::string steps_json(const std::vector<CompileStepTime>& steps) {
  std::string out = "[";
  for (size_t k = 0; k < steps.size(); ++k) {
    const CompileStepTime& s = steps[k];
    out += fmt::format(
        "{}{{\"name\": {}, \"phase\": {}, \"count\": {}, \"wall_ns\": {}, \"thread_ns\": {}}}",
        k ? ", " : "", json_string(s.name), json_string(compile_phase_name(s.phase)), s.count,
        ps_to_ns_exact(s.wall_ps), ps_to_ns_exact(s.thread_ps));
  }
  return out + "]";
}

// "module(40)" when the program id is known.
std::string module_label(const std::string& module, ProgramId id) {
  std::string name = module.empty() ? "(unknown)" : module;
  return id == kNoProgram ? name : fmt::format("{}({})", name, id);
}

std::string json(const CompileResult& r) {
  std::string out =
      fmt::format("{{\"wall_ns\": {}, \"worker_busy_ns\": {}, \"compiles\": {}, ",
                  ps_to_ns_exact(r.wall_ps), ps_to_ns_exact(r.worker_busy_ps), r.compiles.size());
  out += "\"phases\": " + phases_json(r.phases) + ", \"modules\": [";
  for (size_t i = 0; i < r.modules.size(); ++i) {
    const ModuleCompile& m = r.modules[i];
    out += fmt::format(
        "{}{{\"module\": {}{}, \"compiles\": {}, \"wall_ns\": {}, \"worker_busy_ns\": {}, "
        "\"phases\": {}}}",
        i ? ", " : "", json_string(m.module), program_json(m.program_id), m.compiles,
        ps_to_ns_exact(m.wall_ps), ps_to_ns_exact(m.worker_busy_ps), phases_json(m.phases));
  }
  out += "], \"events\": [";
  for (size_t i = 0; i < r.compiles.size(); ++i) {
    const CompileRecord& c = r.compiles[i];
    out += fmt::format(
        "{}{{\"module\": {}{}, \"function\": {}, \"host\": {}, \"thread\": {}, "
        "\"start_ns\": {}, \"wall_ns\": {}, \"events\": {}, \"worker_threads\": {}, "
        "\"worker_busy_ns\": {}, \"phases\": {}, \"steps\": {}",
        i ? ", " : "", json_string(c.module), program_json(c.program_id), json_string(c.function),
        json_string(c.host), json_string(c.thread), ps_to_ns_exact(c.start_ps),
        ps_to_ns_exact(c.wall_ps), c.events, c.worker_threads, ps_to_ns_exact(c.worker_busy_ps),
        phases_json(c.phases), steps_json(c.steps));
    out += "}";
  }
  out += "]";
  if (r.passes_only) out += ", \"passes\": " + steps_json(r.passes);
  out += ", \"notes\": [";
  for (size_t i = 0; i < r.notes.size(); ++i)
    out += fmt::format("{}{}", i ? ", " : "", json_string(r.notes[i]));
  return out + "]}\n";
}

std::string csv(const CompileResult& r) {
  std::string out = "start_ns,module,function,host,thread,wall_ns,worker_busy_ns";
  for (const CompilePhaseTime& ph : r.phases)
    out += fmt::format(",{}_ns", compile_phase_name(ph.phase));
  out += "\n";
  for (const CompileRecord& c : r.compiles) {
    out += fmt::format("{},{},{},{},{},{},{}", ps_to_ns_exact(c.start_ps), csv_field(c.module),
                       csv_field(c.function), csv_field(c.host), csv_field(c.thread),
                       ps_to_ns_exact(c.wall_ps), ps_to_ns_exact(c.worker_busy_ps));
    for (const CompilePhaseTime& ph : c.phases)
      out += fmt::format(",{}", ps_to_ns_exact(ph.wall_ps));
    out += "\n";
  }
  return out;
}

std::string dur(int64_t ps) { return human_duration(static_cast<double>(ps)); }

Cell share(int64_t part, int64_t whole) {
  return whole > 0 ? Cell(static_cast<double>(part) / static_cast<double>(whole)) : Cell::unknown();
}

// `compiles_shown`: compiles listed with their steps, longest first (0 = all, in time order).
std::string table(const CompileResult& r, size_t steps_shown, size_t compiles_shown) {
  std::string out;
  if (r.compiles.empty()) {
    for (const std::string& n : r.notes) out += n + "\n";
    return out;
  }
  out += fmt::format("{} compile{}, {} wall on the launching threads, {} on worker threads\n\n",
                     r.compiles.size(), r.compiles.size() == 1 ? "" : "s", dur(r.wall_ps),
                     dur(r.worker_busy_ps));
  Table phases({{"phase"},
                {"wall", Measure::kDuration},
                {"share", Measure::kShare},
                {"all threads", Measure::kDuration}});
  for (const CompilePhaseTime& ph : r.phases)
    phases.add(
        {compile_phase_name(ph.phase), ph.wall_ps, share(ph.wall_ps, r.wall_ps), ph.thread_ps});
  out += phases.render() + "\n";
  std::vector<TableColumn> module_columns = {{"module"}, {"compiles", Measure::kCount}};
  for (const char* h : {"wall", "trace", "lower", "hlo-passes", "codegen", "other"})
    module_columns.push_back({h, Measure::kDuration});
  Table mods(std::move(module_columns));
  size_t modules_shown =
      compiles_shown ? std::min(r.modules.size(), compiles_shown) : r.modules.size();
  for (size_t i = 0; i < modules_shown; ++i) {
    const ModuleCompile& m = r.modules[i];
    auto w = [&](CompilePhase p) { return m.phases[static_cast<int>(p)].wall_ps; };
    int64_t other = w(CompilePhase::kCompileOther) + w(CompilePhase::kBetweenStages);
    mods.add({module_label(m.module, m.program_id), m.compiles, m.wall_ps, w(CompilePhase::kTrace),
              w(CompilePhase::kLower), w(CompilePhase::kHloPasses), w(CompilePhase::kCodegen),
              other});
  }
  out += mods.render();
  if (modules_shown < r.modules.size())
    out += more_rows_line(modules_shown, r.modules.size(), "modules");
  out += "\n";
  if (r.passes_only) {
    Table passes({{"pass"},
                  {"count", Measure::kCount},
                  {"wall", Measure::kDuration},
                  {"share", Measure::kShare},
                  {"all threads", Measure::kDuration}});
    for (size_t k = 0; k < r.passes.size() && k < steps_shown * 4; ++k) {
      const CompileStepTime& s = r.passes[k];
      passes.add({s.name, s.count, s.wall_ps, share(s.wall_ps, r.wall_ps), s.thread_ps});
    }
    out += passes.render(60) + "\n";
  }
  // The compiles to detail: every one in time order, or the longest few.
  std::vector<const CompileRecord*> listed;
  for (const CompileRecord& c : r.compiles) listed.push_back(&c);
  if (compiles_shown && listed.size() > compiles_shown) {
    std::stable_sort(listed.begin(), listed.end(),
                     [](const auto* a, const auto* b) { return a->wall_ps > b->wall_ps; });
    listed.resize(compiles_shown);
    std::stable_sort(listed.begin(), listed.end(),
                     [](const auto* a, const auto* b) { return a->start_ps < b->start_ps; });
    out += fmt::format("The {} longest compiles:\n", compiles_shown);
  }
  for (const CompileRecord* cp : listed) {
    const CompileRecord& c = *cp;
    std::string label = !c.module.empty()     ? module_label(c.module, c.program_id)
                        : !c.function.empty() ? c.function
                                              : "?";
    out += fmt::format("{}  at {}  wall {}  ({} on {}; {} worker thread{}, {} busy)\n", label,
                       dur(c.start_ps), dur(c.wall_ps), c.host, c.thread, c.worker_threads,
                       c.worker_threads == 1 ? "" : "s", dur(c.worker_busy_ps));
    Table steps({{"step"},
                 {"phase"},
                 {"count", Measure::kCount},
                 {"wall", Measure::kDuration},
                 {"share", Measure::kShare},
                 {"all threads", Measure::kDuration}});
    for (size_t k = 0; k < c.steps.size() && k < steps_shown; ++k) {
      const CompileStepTime& s = c.steps[k];
      steps.add({s.name, compile_phase_name(s.phase), s.count, s.wall_ps,
                 share(s.wall_ps, c.wall_ps), s.thread_ps});
    }
    out += steps.render(60) + "\n";
  }
  if (listed.size() < r.compiles.size())
    out += more_rows_line(listed.size(), r.compiles.size(), "compiles");
  for (const std::string& n : r.notes) out += "note: " + n + "\n";
  return out;
}

}  // namespace

std::string render_compile(const CompileResult& result, OutputFormat format, size_t top) {
  switch (format) {
    case OutputFormat::kJson:
      return json(result);
    case OutputFormat::kCsv:
      return csv(result);
    case OutputFormat::kTable:
      return table(result, 8, top);
  }
  return {};
}

}  // namespace jaxprof
