// A performance gate for CI: is NEW slower than BASE by more than a budget, is it not, or can the
// samples not tell? The per-execution samples of one metric (the step, a module, or an op)
// decide, through the test of effect.h at the factor 1 + budget, one-sided both ways: with one
// capture per side Mann-Whitney over the runs ("slower by more than 5%" must be shown by the
// ranks, not by one unlucky run), with several captures on a side Welch's t-test over the
// captures' medians, so that the spread between processes counts as noise (welch_t_test.h).
//
//   regression:    NEW / BASE > 1 + budget at level alpha (the interval lies above the limit)
//   ok:            NEW / BASE < 1 + budget at level alpha (the interval lies below it)
//   inconclusive:  neither (too few samples, or an interval that holds the limit)
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "jaxprof/analysis/stats/diff.h"
#include "jaxprof/analysis/stats/effect.h"

namespace jaxprof {

struct CheckOptions {
  std::string metric = "step";   // step | module:NAME | op:NAME | op:MODULE/NAME
  double max_regression = 0.05;  // allowed relative slowdown
  double alpha = 0.01;           // one-sided significance level
};

enum class Verdict : uint8_t { kOk, kRegression, kInconclusive };
const char* verdict_name(Verdict v);  // "ok", "regression", "inconclusive"

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
  Verdict verdict = Verdict::kInconclusive;
  bool removed = false;  // the op is not in NEW (verdict ok)
  size_t base_executions = 0, new_executions = 0;
  // The medians of the samples (capture-t: the geometric means of the capture medians).
  double base_median_ps = 0, new_median_ps = 0;
  // The test's estimate of NEW / BASE and its interval at level 1 - 2 alpha, whose bounds are
  // the one-sided (1 - alpha) bounds the verdict reads (0 and +inf where unbounded).
  std::optional<double> ratio;
  double ratio_low = 0, ratio_high = 0;
  double interval_level = 0;
  double p_greater = 1;  // one-sided: NEW > BASE * (1 + max_regression)
  double p_less = 1;     // one-sided: NEW < BASE * (1 + max_regression)
  // inconclusive: how many more samples per side would decide, as far as the spread tells.
  std::optional<MoreSamples> more;
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
