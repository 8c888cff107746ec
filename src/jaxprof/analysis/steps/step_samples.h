// The wall time of each training step as the program marks it (StepTraceAnnotation, steps.h),
// the samples of `check --metric step` and of the step row of `diff`. A step's wall time is what
// a training run pays per step: device work, and the host work around it (input, dispatch, the
// Python loop), which the time of the step's programs leaves out. It stands for the step only
// when the marks wait for the step's device work; otherwise the dominant module does (see
// docs/diff.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "jaxprof/analysis/steps/steps.h"
#include "jaxprof/model/profile.h"

namespace jaxprof {

struct StepSamples {
  std::string name;              // the marks' name ("train"); the most common one
  std::vector<double> per_step;  // wall time (ps) of each steady step, capture after capture
  std::vector<size_t> captures;  // steady steps per capture, in order
  uint64_t marked = 0;           // steps marked, warm-up included
  uint64_t warmup = 0;           // warm-up steps left out (steps.h)
  // Why the marks cannot stand for the step, empty when they can: "no step marks", "no module
  // executions inside the step marks", "the step marks end before their device work".
  std::string unusable = "no step marks";
  size_t unusable_capture = 0;  // 1-based capture the reason comes from (0: a single capture)
  bool usable() const { return unusable.empty(); }
};

StepSamples collect_step_samples(const Profile& profile);
StepSamples step_samples_from(StepsResult steps);

// Several captures of one program as one set of samples; unusable as soon as one capture is.
StepSamples pool_step_samples(std::vector<StepSamples> captures);

// Why the steps of BASE and NEW cannot be compared, for a message ("no step marks in BASE and
// NEW", "no step marks in NEW capture 2"); empty when both sides are usable.
std::string steps_unavailable(const StepSamples& base, const StepSamples& now);

}  // namespace jaxprof
