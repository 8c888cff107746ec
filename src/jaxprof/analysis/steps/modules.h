// "How long does each compiled program take, and how steady is it": per XLA module (program),
// its executions over all devices with warm-up runs reported apart, mean ± std of the
// steady-state execution time, and the ops whose time varies most between executions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "jaxprof/analysis/steps/steady_state.h"
#include "jaxprof/analysis/steps/steps.h"
#include "jaxprof/model/profile.h"

namespace jaxprof {

struct ModulesOptions {
  size_t top_ops = 5;  // most varying ops reported per module
  bool steps = true;   // per-step times (reads the host threads for step annotations)
  // Autotuning modules are left out, and warm-up runs are not in totals and shares, unless
  // included (then warm-up runs count as steady-state runs).
  SteadyStateOptions steady;
};

struct OpVariability {
  std::string name;    // hlo_op (or event name)
  uint64_t count = 0;  // steady executions containing the op
  double mean_ps = 0;  // per execution: the op's summed duration
  double std_ps = 0;
  double cv = 0;  // std / mean
};

struct ModuleStats {
  std::string name;
  ProgramId program_id = kNoProgram;
  uint64_t executions = 0;         // all, warm-up included
  uint64_t warmup_executions = 0;  // first execution of the program on each device
  int64_t total_ps = 0;            // sum of the steady-state execution durations
  int64_t warmup_total_ps = 0;
  double mean_ps = 0;  // steady-state executions (all of them when there are only warm-ups)
  double std_ps = 0;   // population standard deviation, same executions
  int64_t min_ps = 0, max_ps = 0;
  double cv = 0;
  double share = 0;              // total_ps / sum of all modules' total_ps
  bool autotuning = false;       // executions of XLA's autotuner (listed when included)
  double ops_per_execution = 0;  // mean op events per execution
  uint64_t devices = 0;
  std::vector<OpVariability> varying_ops;  // by cv descending
};

struct ModulesResult {
  std::vector<ModuleStats> modules;  // by total_ps descending
  int64_t total_ps = 0;
  StepsResult steps;  // source "none" when not asked for or not marked
};

ModulesResult compute_modules(const Profile& profile, const ModulesOptions& options = {});

class PartialSet;
ModulesResult modules_from_partials(const PartialSet& set, const ModulesOptions& options = {});

}  // namespace jaxprof
