// Steady state: which device work is the program's repeated running, and which is setting it up.
// By default every analysis of device time leaves out
// - autotuning: executions of the modules XLA's GPU autotuner builds and times while compiling
//   (`gemm_fusion_dot.411`, `extracted`, ...). They carry no program id: XLA annotates them by
//   module name alone, while every compiled program has one. Set apart only on devices where
//   other executions do carry program ids (profiles without any program id cannot tell);
// - warm-up: the first execution of each program on each device (compile, allocation and cache
//   warm-up land in it), unless the device has no other execution (then nothing is steadier);
// - compiling: the time the device's host spent in compiles (analysis/compile/compile.h), in which the
//   device waits; work of steady executions that overlaps it stays.
// The options bring them back. See docs/steady-state.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "jaxprof/analysis/compile/compile.h"
#include "jaxprof/analysis/timeline/intervals.h"
#include "jaxprof/model/execution_role.h"
#include "jaxprof/model/profile.h"

namespace jaxprof {


// A module as SetApartWork lists it: its name, with the program id when it has one.
std::string steady_module_label(const std::string& name, ProgramId program);


struct SteadyState {
  SteadyStateOptions options;
  // Per device of op_devices() (module_executions order), the role of each execution.
  std::vector<std::vector<ExecutionRole>> roles;
  // Op events of executions set apart (by the options): one bit per Profile::events entry.
  std::vector<uint64_t> set_apart_events;
  SetApartWork autotuning, warmup;  // filled whether or not the options include them
  int64_t all_execution_ps = 0;     // summed durations of every execution
  // Devices whose warm-up was kept because they ran nothing else.
  uint64_t devices_without_steady_state = 0;

  bool set_apart(uint32_t event) const {
    return !set_apart_events.empty() && (set_apart_events[event >> 6] >> (event & 63) & 1);
  }
  bool sets_apart(ExecutionRole role) const {
    return (role == ExecutionRole::kAutotuning && !options.include_autotuning) ||
           (role == ExecutionRole::kWarmup && !options.include_warmup);
  }
  bool any_set_apart() const { return !set_apart_events.empty(); }
};

// Computed once per profile and options (Profile::memo): call it before a
// Profile::ReadOnlyScope whose analyses ask for it. Decodes what module_executions decodes.
const SteadyState& steady_state(const Profile& profile, const SteadyStateOptions& options);

// The time of each device (op_devices() order) that is not steady state: set-apart executions'
// windows and, without include_warmup, the host's compile windows, less the windows of steady
// executions; merged. Adds the compiles' count and wall time. Memoized like steady_state (it
// reads the compile events of the host threads).
struct SteadyStateTime {
  std::vector<std::vector<Interval>> set_apart;  // per device
  CompileResult compiles;  // compute_compile with totals_only, top_steps 1 (whatever the options)
};
const SteadyStateTime& steady_state_time(const Profile& profile, const SteadyStateOptions& options);

// What was set apart, for reports: the totals of SteadyState (and of SteadyStateTime's compiles
// when `time` is given).
struct SetApartSummary {
  SteadyStateOptions options;
  SetApartWork autotuning, warmup;
  int64_t all_execution_ps = 0;
  uint64_t devices_without_steady_state = 0;
  bool with_compiles = false;
  uint64_t compiles = 0;
  int64_t compile_wall_ps = 0;
};
SetApartSummary summarize_set_apart(const SteadyState& steady, const SteadyStateTime* time);
// The same from host partials (partial.h) extracted with `options`, with the compiles of
// `compiles` when given.
class PartialSet;
SetApartSummary set_apart_from_partials(const PartialSet& set, const SteadyStateOptions& options,
                                        const CompileResult* compiles);
// Adds `b` to `a` (modules as a sorted union).
void merge_set_apart(SetApartWork& a, const SetApartWork& b);

}  // namespace jaxprof
