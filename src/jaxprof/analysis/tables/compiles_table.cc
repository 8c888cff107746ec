#include "jaxprof/analysis/tables/compiles_table.h"

#include <string>

#include "jaxprof/analysis/compile/compile.h"

namespace jaxprof {
namespace {

const CompileResult& table_compiles(const Profile& p) {
  return p.memo<CompileResult>("tables.compiles", [&] { return compute_compile(p); });
}

}  // namespace

RecordTable compiles_table(const Profile& p) {
  const CompileResult& r = table_compiles(p);
  RecordTable t;
  t.name = "compiles";
  RecordColumn& id = t.add("compile", TableType::kInt64, "", "its number, by start");
  RecordColumn& host = t.add("host", TableType::kString, "", "the host");
  RecordColumn& thread = t.add("thread", TableType::kString, "", "the thread that launched it");
  RecordColumn& module = t.add("module", TableType::kString, "", "the XLA module, when known");
  RecordColumn& function = t.add("function", TableType::kString, "", "the jitted Python function");
  RecordColumn& program = t.add("program_id", TableType::kUInt64, "", "the program id, when known");
  RecordColumn& start = t.add("start_ps", TableType::kInt64, "ps", "start on the timeline");
  RecordColumn& wall = t.add("wall_ps", TableType::kInt64, "ps", "wall time");
  RecordColumn& events = t.add("events", TableType::kInt64, "", "compile events in it");
  RecordColumn& workers = t.add("worker_threads", TableType::kInt64, "", "other threads helping");
  RecordColumn& busy = t.add("worker_busy_ps", TableType::kInt64, "ps", "their busy time, summed");
  std::vector<RecordColumn*> phases;
  for (int ph = 0; ph < kCompilePhaseCount; ++ph) {
    std::string n = compile_phase_name(static_cast<CompilePhase>(ph));
    for (char& ch : n)
      if (ch == '-' || ch == ' ') ch = '_';
    phases.push_back(&t.add(
        n + "_ps", TableType::kInt64, "ps",
        "wall time in phase " + std::string(compile_phase_name(static_cast<CompilePhase>(ph)))));
  }
  StringCodes hosts(host), threads(thread), modules(module), functions(function);
  int64_t number = 0;
  for (const CompileRecord& c : r.compiles) {
    id.push(number++);
    hosts.push(c.host);
    threads.push(c.thread);
    modules.push(c.module, !c.module.empty());
    functions.push(c.function, !c.function.empty());
    if (c.program_id == kNoProgram)
      program.push_null();
    else
      program.push_u(c.program_id);
    start.push(c.start_ps);
    wall.push(c.wall_ps);
    events.push(static_cast<int64_t>(c.events));
    workers.push(c.worker_threads);
    busy.push(c.worker_busy_ps);
    std::vector<int64_t> by_phase(kCompilePhaseCount, 0);
    for (const CompilePhaseTime& ph : c.phases) by_phase[static_cast<int>(ph.phase)] += ph.wall_ps;
    for (int ph = 0; ph < kCompilePhaseCount; ++ph) phases[ph]->push(by_phase[ph]);
    ++t.rows;
  }
  t.finish();
  return t;
}

RecordTable compile_passes_table(const Profile& p) {
  const CompileResult& r = table_compiles(p);
  RecordTable t;
  t.name = "compile_passes";
  RecordColumn& id = t.add("compile", TableType::kInt64, "", "the compile (compiles.compile)");
  RecordColumn& name = t.add("name", TableType::kString, "", "the event name (pass, stage, step)");
  RecordColumn& phase = t.add("phase", TableType::kString, "", "its phase");
  RecordColumn& count = t.add("count", TableType::kInt64, "", "events of this name in the compile");
  RecordColumn& wall = t.add("wall_ps", TableType::kInt64, "ps", "wall time attributed to it");
  RecordColumn& thread = t.add("thread_ps", TableType::kInt64, "ps", "self time over all threads");
  StringCodes names(name), phases(phase);
  int64_t number = 0;
  for (const CompileRecord& c : r.compiles) {
    for (const CompileStepTime& s : c.steps) {
      id.push(number);
      names.push(s.name);
      phases.push(compile_phase_name(s.phase));
      count.push(static_cast<int64_t>(s.count));
      wall.push(s.wall_ps);
      thread.push(s.thread_ps);
      ++t.rows;
    }
    ++number;
  }
  t.finish();
  return t;
}

}  // namespace jaxprof
