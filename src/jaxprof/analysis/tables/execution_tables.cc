#include "jaxprof/analysis/tables/execution_tables.h"

#include "jaxprof/analysis/steps/module_executions.h"
#include "jaxprof/analysis/steps/steady_state.h"
#include "jaxprof/analysis/tables/execution_rows.h"

namespace jaxprof {

RecordTable module_executions_table(const Profile& p) {
  const std::vector<DeviceExecutions>& devices = module_executions(p);
  const SteadyState& steady = steady_state(p, SteadyStateOptions{});
  const StepLookup steps(table_steps(p));
  RecordTable t;
  t.name = "module_executions";
  RecordColumn& exec =
      t.add("execution", TableType::kInt64, "", "its number (device_ops.execution)");
  RecordColumn& host = t.add("host", TableType::kString, "", "the host of the device");
  RecordColumn& device = t.add("device", TableType::kString, "", "the device");
  RecordColumn& module = t.add("module", TableType::kString, "", "the XLA module");
  RecordColumn& program =
      t.add("program_id", TableType::kUInt64, "", "its program id; null if none");
  RecordColumn& run = t.add("run_id", TableType::kInt64, "", "the run id, when the profile has one");
  RecordColumn& start = t.add("start_ps", TableType::kInt64, "ps", "start on the timeline");
  RecordColumn& end = t.add("end_ps", TableType::kInt64, "ps", "end on the timeline (exclusive)");
  RecordColumn& dur = t.add("duration_ps", TableType::kInt64, "ps", "end_ps - start_ps");
  RecordColumn& ops = t.add("op_events", TableType::kInt64, "", "device op events in it");
  RecordColumn& role =
      t.add("role", TableType::kString, "", "steady, warmup or autotuning (docs/steady-state.md)");
  RecordColumn& step =
      t.add("step", TableType::kInt64, "", "the step holding its start (steps.step); null if none");
  RecordColumn& source = t.add("source", TableType::kString, "",
                              "how executions were found on the device (docs/modules.md)");
  StringCodes hosts(host), device_names(device), modules(module), roles(role), sources(source);
  int64_t next = 0;
  for (size_t di = 0; di < devices.size(); ++di) {
    const DeviceExecutions& d = devices[di];
    const uint32_t h = p.planes[d.plane].host;
    for (size_t k = 0; k < d.executions.size(); ++k) {
      const ModuleExecution& x = d.executions[k];
      exec.push(next++);
      hosts.push(p.hosts[h].name);
      device_names.push(d.device);
      modules.push(x.name, !x.name.empty());
      if (x.program_id == kNoProgram)
        program.push_null();
      else
        program.push_u(x.program_id);
      if (x.run_id)
        run.push(*x.run_id);
      else
        run.push_null();
      start.push(x.start_ps);
      end.push(x.end_ps);
      dur.push(x.duration_ps());
      ops.push(static_cast<int64_t>(x.events.size()));
      ExecutionRole r = di < steady.roles.size() && k < steady.roles[di].size()
                            ? steady.roles[di][k]
                            : ExecutionRole::kSteady;
      roles.push(r == ExecutionRole::kWarmup ? "warmup" : execution_role_name(r));
      if (auto s = steps.at(h, x.start_ps))
        step.push(*s);
      else
        step.push_null();
      sources.push(execution_source_name(d.source));
      ++t.rows;
    }
  }
  t.finish();
  return t;
}

RecordTable steps_table(const Profile& p) {
  const StepsResult& r = table_steps(p);
  RecordTable t;
  t.name = "steps";
  RecordColumn& step = t.add("step", TableType::kInt64, "", "the step number");
  RecordColumn& name = t.add("name", TableType::kString, "", "the step's name");
  RecordColumn& host = t.add("host", TableType::kString, "", "the host that marks it");
  RecordColumn& start = t.add("start_ps", TableType::kInt64, "ps", "start (all its windows)");
  RecordColumn& end = t.add("end_ps", TableType::kInt64, "ps", "end (all its windows)");
  RecordColumn& dur = t.add("duration_ps", TableType::kInt64, "ps", "end_ps - start_ps");
  RecordColumn& windows = t.add("windows", TableType::kInt64, "", "the spans it was merged from");
  RecordColumn& longest = t.add("longest_window_ps", TableType::kInt64, "ps", "the longest span");
  RecordColumn& execs =
      t.add("executions", TableType::kInt64, "", "module executions starting in it");
  RecordColumn& device = t.add("device_ps", TableType::kInt64, "ps", "their summed durations");
  RecordColumn& device_end =
      t.add("device_end_ps", TableType::kInt64, "ps", "their latest end; null when none");
  RecordColumn& compiling = t.add("compiling", TableType::kBool, "", "its host compiled during it");
  RecordColumn& warmup =
      t.add("warmup", TableType::kBool, "", "compiling, or holds a warm-up execution");
  RecordColumn& source = t.add("source", TableType::kString, "",
                              "what marks steps: host-annotation, steps-line or group-id");
  StringCodes names(name), hosts(host), sources(source);
  for (const Step& s : r.steps) {
    step.push(s.number);
    names.push(s.name);
    hosts.push(s.host < p.hosts.size() ? std::string_view(p.hosts[s.host].name) : "",
               s.host < p.hosts.size());
    start.push(s.start_ps);
    end.push(s.end_ps);
    dur.push(s.duration_ps());
    windows.push(s.windows);
    longest.push(s.longest_window_ps);
    execs.push(static_cast<int64_t>(s.executions));
    device.push(s.device_ps);
    if (s.executions)
      device_end.push(s.device_end_ps);
    else
      device_end.push_null();
    compiling.push_b(s.compiling);
    warmup.push_b(s.warmup);
    sources.push(r.source);
    ++t.rows;
  }
  t.finish();
  return t;
}

}  // namespace jaxprof
