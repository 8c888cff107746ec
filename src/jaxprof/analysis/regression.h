// A performance gate for CI: is NEW significantly slower than BASE by more than a budget? The
// per-execution samples of one metric (the step program, a module, or an op) decide: with one
// capture per side through a one-sided Mann-Whitney test of NEW against BASE scaled by the
// budget ("slower by more than 5%" must be shown by the ranks, not by one unlucky run); with
// several captures on a side through a one-sided Welch t-test over the captures' medians, so that
// the spread between processes counts as noise (capture_test.h).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "jaxprof/analysis/diff.h"
#include "jaxprof/analysis/significance.h"

namespace jaxprof {

struct CheckOptions {
  std::string metric = "step";   // step | module:NAME | op:NAME | op:MODULE/NAME
  double max_regression = 0.05;  // allowed relative slowdown
  double alpha = 0.01;           // one-sided significance level
};

struct CheckResult {
  std::string metric;  // what was compared, e.g. "module jit_step" or "op jit_step/dot.3"
  std::string module;  // the module of the metric (step marks: BASE's top module, for top_op)
  // "step-marks" (wall time of the marked steps), "top-module" (the step metric without usable
  // step marks), "module" or "op".
  const char* metric_source = "module";
  std::string step_fallback;          // top-module: why the step marks were not used
  const char* unit = "runs";          // what a sample is: "runs" of a module, or "steps"
  const char* test = "mann-whitney";  // or "capture-t"
  size_t base_captures = 1, new_captures = 1;
  bool regression = false;
  bool tested = false;   // false: too few executions for a test, the medians decided
  bool removed = false;  // the op is not in NEW
  size_t base_executions = 0, new_executions = 0;
  // mann-whitney: the medians of the runs and their ratio, with a bootstrap 95% interval;
  // capture-t: the geometric means of the capture medians and their ratio, with the t interval.
  double base_median_ps = 0, new_median_ps = 0;
  std::optional<double> ratio;
  Interval95 ratio_ci;
  double p_value = 1;  // one-sided: NEW > BASE * (1 + max_regression)
  // step and module metrics: the op of the module whose change adds the most time per run.
  std::optional<DiffRow> top_op;
  double module_delta_ps = 0;  // change of the module's mean run, for the op's share
};

// `step` compares the wall time of the marked steps when both sides have usable step marks
// (step_samples.h), else the module with the most device time in BASE. Throws InputError when
// the metric does not name a module or op of BASE (or NEW lacks the module).
CheckResult check_regression(const ProfileSamples& base, const ProfileSamples& now,
                             const CheckOptions& options);

}  // namespace jaxprof
