// What two sets of samples support, in one place for diff and check, so that the number shown is
// the statistic that was tested: the test (Mann-Whitney over the runs when each side is one
// capture, Welch's t-test over the capture medians when there are several), its p-values for NEW
// against a factor times BASE, the estimate of NEW / BASE that goes with that test, its interval,
// and how many more samples would let the test decide a question it cannot decide yet.
#pragma once

#include <cstddef>
#include <optional>
#include <span>

namespace jaxprof {

struct Effect {
  const char* test = "mann-whitney";  // or "capture-t"
  bool log_scale = true;         // capture-t: false when a capture's median is 0 (linear scale)
  size_t base_n = 0, new_n = 0;  // the test's samples: runs (or steps), or captures with runs
  // NEW against factor x BASE: one-sided both ways, and two-sided.
  double p_greater = 1, p_less = 1, p_two_sided = 1;
  // The estimate of NEW / BASE: mann-whitney, the Hodges-Lehmann ratio (median of the pairwise
  // ratios); capture-t, the ratio of the geometric means of the capture medians (linear scale:
  // of their means). Absent when BASE is all zero and NEW too.
  std::optional<double> ratio;
  // The factors the two-sided test at `interval_alpha` does not reject: 0 and +inf where it can
  // reject nothing on that side (too few samples).
  double low = 0, high = 0;
  // capture-t: the log (or linear) difference less log(factor), and the variances of the two
  // terms of its squared standard error.
  double estimate = 0, var_base = 0, var_new = 0;
};

// `base` and `now` hold per-execution samples laid out capture after capture (`*_captures`
// executions each; empty spans: one capture). Several captures with executions in all (more than
// two) select the test over captures.
Effect compare_samples(std::span<const double> base, std::span<const size_t> base_captures,
                       std::span<const double> now, std::span<const size_t> new_captures,
                       double factor, double interval_alpha);

// How many more samples per side (the same number on each, the spread as it is now) the
// one-sided test at `alpha` needs to tell whether NEW / BASE is above `limit`, where it cannot
// yet, with 80% probability if the change is what it is estimated to be now; `effect` must be
// compare_samples(..., limit, 2 * alpha). `at_least`: the samples are too few for any verdict, and
// `per_side` only brings them to the fewest that could give one.
struct MoreSamples {
  size_t per_side = 0;
  bool at_least = false;
};
// None when more samples of this spread would not decide: the estimate sits at the limit, or
// more than a million per side would be needed.
std::optional<MoreSamples> more_samples_to_decide(const Effect& effect, double limit, double alpha);

}  // namespace jaxprof
