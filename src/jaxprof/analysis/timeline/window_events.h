// How many events a window of the timeline holds, for the size of an exported trace before it
// is written (`export --steps/--time`, docs/export.md "A window"): events of every line,
// counted as the export keeps them (those that overlap the window, kept whole), and the steps
// that bound a window.
#pragma once

#include <cstdint>
#include <optional>

#include "jaxprof/analysis/steps/steps.h"
#include "jaxprof/model/profile.h"

namespace jaxprof {

struct TimeSpan {
  int64_t begin_ps = 0, end_ps = 0;
};

// The span of the steps numbered first..last (both included) over every host; none when no
// step has a number in that range.
std::optional<TimeSpan> steps_span(const StepsResult& steps, int64_t first, int64_t last);

// Every line's events (decodes them all); with a span, those that overlap it.
uint64_t count_events(const Profile& profile, const std::optional<TimeSpan>& span = {});

// The longest run of consecutive steps whose span holds at most `max_events` events, from the
// first steady (not warm-up) step on, else from the first step; none when no such run fits.
struct FittingSteps {
  int64_t first = 0, last = 0;
  uint64_t events = 0;
};
std::optional<FittingSteps> steps_that_fit(const Profile& profile, const StepsResult& steps,
                                      uint64_t max_events);

}  // namespace jaxprof
