#include "jaxprof/analysis/critical_path/critical_path_digest.h"

#include <algorithm>
#include <numeric>

#include "jaxprof/analysis/critical_path/step_work.h"
#include "jaxprof/analysis/steps/steps.h"

namespace jaxprof {

namespace {

// The steps counted (the steady ones, all when every one is warm-up), the median of them by
// marked duration (the lower one of an even count; ties by order), or SIZE_MAX.
template <typename Steps, typename Warmup, typename Duration>
size_t median_of(const Steps& steps, Warmup warmup, Duration duration, size_t* counted) {
  std::vector<size_t> idx;
  for (size_t i = 0; i < steps.size(); ++i)
    if (!warmup(steps[i])) idx.push_back(i);
  if (idx.empty()) {
    idx.resize(steps.size());
    std::iota(idx.begin(), idx.end(), size_t{0});
  }
  if (counted) *counted = idx.size();
  if (idx.empty()) return SIZE_MAX;
  std::stable_sort(idx.begin(), idx.end(),
                   [&](size_t a, size_t b) { return duration(steps[a]) < duration(steps[b]); });
  return idx[(idx.size() - 1) / 2];
}

CriticalPathDigest digest_of(CriticalStep step, size_t top) {
  CriticalPathDigest d;
  d.step = std::move(step);
  d.step.path.clear();
  d.step.collectives.clear();
  if (d.step.ops.size() > top) d.step.ops.resize(top);
  return d;
}

}  // namespace

size_t median_steady_step(const std::vector<CriticalStep>& steps, size_t* counted) {
  return median_of(
      steps, [](const CriticalStep& s) { return s.warmup; },
      [](const CriticalStep& s) { return s.marked_ps; }, counted);
}

CriticalPathDigest digest_critical_path(const CriticalPathResult& r, size_t top) {
  size_t counted = 0;
  const size_t median = median_steady_step(r.steps, &counted);
  CriticalPathDigest d;
  if (median == SIZE_MAX)
    d.unavailable = "no device work to follow";
  else
    d = digest_of(r.steps[median], top);
  d.step_source = r.step_source;
  d.steps = r.steps.size();
  d.counted = counted;
  return d;
}

CriticalPathDigest digest_critical_path(const Profile& profile, size_t top) {
  CriticalPathDigest d;
  // Without step marks the one window is the whole capture, warm-up and compiles with it: no
  // step to speak for, and the costliest graph there is.
  StepsResult steps = compute_steps(profile);
  if (steps.steps.empty()) {
    d.unavailable =
        "the profile marks no steps (`jaxprof critical-path` follows all its device work as one "
        "window)";
    return d;
  }
  const ProfileWork all = gather_profile_work(profile, std::move(steps));
  size_t counted = 0;
  const size_t median = median_of(
      all.steps, [](const Step& s) { return s.warmup; },
      [](const Step& s) { return s.duration_ps(); }, &counted);
  if (median == SIZE_MAX) {
    d.unavailable = "no device work to follow";
  } else {
    // Only the median step's graph is built: the others would cost as much each.
    CriticalPathOptions o;
    o.rank = false;
    d = digest_of(follow_step(profile, all, median, o), top);
  }
  d.step_source = all.source;
  d.steps = all.steps.size();
  d.counted = counted;
  return d;
}

}  // namespace jaxprof
