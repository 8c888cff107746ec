// Steady state into host partials: each execution's role (when executions are extracted), and
// what each host's devices set apart, so that commands from partials say what was left out as
// a profile's do.
#include <set>

#include "jaxprof/analysis/partial/partial_build.h"
#include "jaxprof/analysis/steps/module_executions.h"
#include "jaxprof/analysis/steps/steady_state.h"

namespace jaxprof {

void extract_steady(PartialBuild& b) {
  const Profile& p = b.p;
  const std::vector<DeviceExecutions>& all = module_executions(p);
  const SteadyState& s = steady_state(p, b.steady);
  std::vector<std::set<std::string>> autotuned(b.hosts.size()), warm(b.hosts.size());
  for (size_t di = 0; di < all.size() && di < b.devices.size(); ++di) {
    PartialDevice& out = b.device(di);
    HostPartial& h = b.host_of(di);
    const uint32_t host = b.where[di].host;
    bool kept_warmup = false;
    for (size_t k = 0; k < all[di].executions.size(); ++k) {
      const ModuleExecution& x = all[di].executions[k];
      const ExecutionRole role = s.roles[di][k];
      if (k < out.executions.size()) out.executions[k].role = role;
      h.steady.all_execution_ps += x.duration_ps();
      kept_warmup = kept_warmup || (x.warmup && role == ExecutionRole::kSteady);
      SetApartWork* work = role == ExecutionRole::kAutotuning ? &h.steady.autotuning
                           : role == ExecutionRole::kWarmup   ? &h.steady.warmup
                                                              : nullptr;
      if (!work) continue;
      ++work->executions;
      work->op_events += x.events.size();
      work->execution_ps += x.duration_ps();
      (role == ExecutionRole::kAutotuning ? autotuned : warm)[host].insert(
          steady_module_label(x.name, x.program_id));
    }
    h.steady.devices_without_steady_state += kept_warmup;
  }
  for (size_t h = 0; h < b.hosts.size(); ++h) {
    b.hosts[h].steady.autotuning.modules.assign(autotuned[h].begin(), autotuned[h].end());
    b.hosts[h].steady.warmup.modules.assign(warm[h].begin(), warm[h].end());
  }
}

SetApartSummary set_apart_from_partials(const PartialSet& set, const SteadyStateOptions& options,
                                        const CompileResult* compiles) {
  SetApartSummary out;
  out.options = options;
  // A host of the CPU backend has no devices in a set where some host has device planes
  // (PartialSet::devices), as in a profile of them all: nothing it set apart is the set's.
  bool device_planes = false;
  for (const HostPartial& h : set.heads()) device_planes |= !h.cpu_backend && !h.devices.empty();
  for (const HostPartial& h : set.heads()) {
    if (device_planes && h.cpu_backend) continue;
    merge_set_apart(out.autotuning, h.steady.autotuning);
    merge_set_apart(out.warmup, h.steady.warmup);
    out.all_execution_ps += h.steady.all_execution_ps;
    out.devices_without_steady_state += h.steady.devices_without_steady_state;
  }
  if (compiles) {
    out.with_compiles = true;
    out.compiles = compiles->compiles.size();
    out.compile_wall_ps = compiles->wall_ps;
  }
  return out;
}

}  // namespace jaxprof
