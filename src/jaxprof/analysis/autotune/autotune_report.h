// Per-candidate timing from a profile of autotuning runs: every execution of a candidate is one
// sample; the report keeps every sample, summarises each candidate with robust statistics, and
// says whether the fastest one is faster than the runner-up beyond noise (docs/autotune.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "jaxprof/model/profile.h"

namespace jaxprof {

inline constexpr uint64_t kAutotuneBootstrapSeed = 0x6a6178747566;  // "jaxtuf"

struct AutotuneReportOptions {
  // RE2 searched in module names (then event names); group 1, when present, is the candidate id.
  std::string pattern = "autotune_fn_(\\d+)";
  bool include_warmup = false;  // count each program's first execution on a device as a sample
  size_t resamples = 2000;      // bootstrap resamples of the median
  uint64_t seed = kAutotuneBootstrapSeed;
};

struct CandidateTiming {
  std::string id;                   // the pattern's id group (the whole match without a group)
  std::vector<std::string> names;   // module or event names that matched, sorted
  std::vector<int64_t> samples_ps;  // one per execution, in time order
  std::vector<int64_t> warmup_samples_ps;  // first executions, kept apart unless included
  std::vector<int64_t> span_samples_ps;    // execution spans (start of first op to end of last)
  double median_ps = 0, mean_ps = 0;
  double mad_ps = 0;                     // median absolute deviation from the median, unscaled
  double ci_low_ps = 0, ci_high_ps = 0;  // bootstrap 95% interval of the median
};

struct AutotuneReport {
  std::string pattern;
  std::string source;  // "module executions", "events", or "" when nothing matched
  uint64_t seed = 0;
  size_t resamples = 0;
  std::vector<CandidateTiming> candidates;  // by median, fastest first; sample-less ones last
  int winner = -1, runner_up = -1;          // indices into candidates
  bool ci_disjoint = false;                 // winner's interval ends before the runner-up's begins
  double p_value = 1;        // one-sided Mann-Whitney: the winner's samples tend to be smaller
  bool significant = false;  // ci_disjoint or p_value < 0.05
  double speedup = 0;        // runner-up median / winner median
  std::vector<std::string> warnings;
};

// Throws InputError for an invalid pattern.
AutotuneReport autotune_report(const Profile& profile, const AutotuneReportOptions& options);

// Ranks candidates whose samples were gathered elsewhere (several profiles merged, or wall-clock
// timing): statistics per candidate, order, winner and significance exactly as autotune_report
// computes them. `source` is reported as given; options.pattern is only echoed.
AutotuneReport rank_candidates(std::vector<CandidateTiming> candidates,
                               const AutotuneReportOptions& options, std::string source);

// Statistics of one candidate from its samples (exposed for tests and the Python layer).
void summarise_candidate(CandidateTiming& c, size_t resamples, uint64_t seed);

}  // namespace jaxprof
