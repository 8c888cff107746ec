#include "jaxprof/analysis/steps/steady_state.h"

#include <algorithm>
#include <iterator>
#include <set>

#include "jaxprof/analysis/compile/compile.h"
#include "jaxprof/analysis/steps/module_executions.h"

namespace jaxprof {

std::string steady_module_label(const std::string& name, ProgramId program) {
  return program == kNoProgram ? name : name + "(" + std::to_string(program) + ")";
}

namespace {

std::string options_key(const char* what, const SteadyStateOptions& o) {
  return std::string(what) + (o.include_autotuning ? ":a" : ":-") + (o.include_warmup ? "w" : "-");
}

std::string module_label(const ModuleExecution& x) {
  return steady_module_label(x.name, x.program_id);
}

void count(SetApartWork& w, std::set<std::string>& modules, const ModuleExecution& x) {
  ++w.executions;
  w.op_events += x.events.size();
  w.execution_ps += x.duration_ps();
  modules.insert(module_label(x));
}

SteadyState compute_steady_state(const Profile& p, const SteadyStateOptions& options) {
  SteadyState s;
  s.options = options;
  const std::vector<DeviceExecutions>& all = module_executions(p);
  std::set<std::string> autotuned, warm;
  for (const DeviceExecutions& d : all) {
    std::vector<ExecutionRole>& roles = s.roles.emplace_back(d.executions.size());
    // Autotuning shows only against programs that have ids.
    const bool program_ids =
        std::any_of(d.executions.begin(), d.executions.end(),
                    [](const ModuleExecution& x) { return x.program_id != kNoProgram; });
    bool steady = false;
    for (size_t k = 0; k < d.executions.size(); ++k) {
      const ModuleExecution& x = d.executions[k];
      if (program_ids && x.program_id == kNoProgram)
        roles[k] = ExecutionRole::kAutotuning;
      else if (x.warmup)
        roles[k] = ExecutionRole::kWarmup;
      else
        steady = true;
    }
    if (!steady) {
      // Nothing ran twice: its first runs are all there is to describe.
      bool warmups = false;
      for (ExecutionRole& r : roles)
        if (r == ExecutionRole::kWarmup) {
          r = ExecutionRole::kSteady;
          warmups = true;
        }
      s.devices_without_steady_state += warmups;
    }
    for (size_t k = 0; k < d.executions.size(); ++k) {
      const ModuleExecution& x = d.executions[k];
      s.all_execution_ps += x.duration_ps();
      if (roles[k] == ExecutionRole::kAutotuning) count(s.autotuning, autotuned, x);
      if (roles[k] == ExecutionRole::kWarmup) count(s.warmup, warm, x);
      if (!s.sets_apart(roles[k])) continue;
      if (s.set_apart_events.empty()) s.set_apart_events.assign((p.events.size() + 63) / 64, 0);
      for (uint32_t e : x.events) s.set_apart_events[e >> 6] |= uint64_t{1} << (e & 63);
    }
  }
  s.autotuning.modules.assign(autotuned.begin(), autotuned.end());
  s.warmup.modules.assign(warm.begin(), warm.end());
  return s;
}

SteadyStateTime compute_steady_state_time(const Profile& p, const SteadyStateOptions& options) {
  SteadyStateTime t;
  const SteadyState& s = steady_state(p, options);
  const std::vector<DeviceExecutions>& all = module_executions(p);
  // Compile windows per host (by host index).
  std::vector<std::vector<Interval>> compiling(p.hosts.size());
  t.compiles = compute_compile(p, {.top_steps = 1, .totals_only = true});
  if (!options.include_warmup) {
    for (const CompileRecord& c : t.compiles.compiles)
      for (size_t h = 0; h < p.hosts.size(); ++h)
        if (p.hosts[h].name == c.host) compiling[h].push_back({c.start_ps, c.start_ps + c.wall_ps});
    for (auto& v : compiling) merge_intervals(v);
  }
  for (size_t d = 0; d < all.size(); ++d) {
    std::vector<Interval> apart, steady;
    for (size_t k = 0; k < all[d].executions.size(); ++k) {
      const ModuleExecution& x = all[d].executions[k];
      (s.sets_apart(s.roles[d][k]) ? apart : steady).push_back({x.start_ps, x.end_ps});
    }
    // Compiling counts only on devices with executions: without them nothing tells the device's
    // own work from the compile's.
    if (!all[d].executions.empty()) {
      const std::vector<Interval>& c = compiling[p.planes[all[d].plane].host];
      apart.insert(apart.end(), c.begin(), c.end());
    }
    merge_intervals(apart);
    merge_intervals(steady);
    t.set_apart.push_back(steady.empty() ? std::move(apart) : subtract_intervals(apart, steady));
  }
  return t;
}

}  // namespace

SetApartSummary summarize_set_apart(const SteadyState& s, const SteadyStateTime* time) {
  SetApartSummary out;
  out.options = s.options;
  out.autotuning = s.autotuning;
  out.warmup = s.warmup;
  out.all_execution_ps = s.all_execution_ps;
  out.devices_without_steady_state = s.devices_without_steady_state;
  if (time) {
    out.with_compiles = true;
    out.compiles = time->compiles.compiles.size();
    out.compile_wall_ps = time->compiles.wall_ps;
  }
  return out;
}

void merge_set_apart(SetApartWork& a, const SetApartWork& b) {
  a.executions += b.executions;
  a.op_events += b.op_events;
  a.execution_ps += b.execution_ps;
  std::vector<std::string> modules;
  std::set_union(a.modules.begin(), a.modules.end(), b.modules.begin(), b.modules.end(),
                 std::back_inserter(modules));
  a.modules = std::move(modules);
}

const SteadyState& steady_state(const Profile& p, const SteadyStateOptions& options) {
  return p.memo<SteadyState>(options_key("steady_state", options),
                             [&] { return compute_steady_state(p, options); });
}

const SteadyStateTime& steady_state_time(const Profile& p, const SteadyStateOptions& options) {
  return p.memo<SteadyStateTime>(options_key("steady_state_time", options),
                                 [&] { return compute_steady_state_time(p, options); });
}

}  // namespace jaxprof
