// The critical path in a few lines, for `summary` and the report: the median steady step's
// critical time by category and the ops with most time on its path.
#pragma once

#include <cstddef>
#include <string>

#include "jaxprof/analysis/critical_path/critical_path.h"
#include "jaxprof/model/profile.h"

namespace jaxprof {

struct CriticalPathDigest {
  // Why there is no digest ("" when there is one): partial summaries keep no events to follow,
  // several hosts read one by one are never in memory together, a profile without device work.
  std::string unavailable;
  std::string step_source;  // as CriticalPathResult's
  size_t steps = 0;         // steps in the profile
  size_t counted = 0;       // those the median is taken over: the steady ones (all when none is)
  // The median step of those counted (the lower one of an even count), by its duration as the
  // profile marks it: its path and collectives dropped, its ops cut to the digest's top.
  CriticalStep step;
  bool available() const { return unavailable.empty(); }
};

// The steps the digest is taken over (the steady ones, all when every one is warm-up) and the
// median of them by marked duration, as an index into `steps` (SIZE_MAX when there are none).
size_t median_steady_step(const std::vector<CriticalStep>& steps, size_t* counted = nullptr);

// From a computed result (the report's), or from the profile: there only the median step's graph
// is built, and a profile that marks no steps has none (`top`: ops kept).
CriticalPathDigest digest_critical_path(const CriticalPathResult& r, size_t top);
CriticalPathDigest digest_critical_path(const Profile& profile, size_t top);

}  // namespace jaxprof
