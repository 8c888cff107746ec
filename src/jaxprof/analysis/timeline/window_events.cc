#include "jaxprof/analysis/timeline/window_events.h"

#include <algorithm>

namespace jaxprof {

std::optional<TimeSpan> steps_span(const StepsResult& steps, int64_t first, int64_t last) {
  std::optional<TimeSpan> span;
  for (const Step& s : steps.steps) {
    if (s.number < first || s.number > last) continue;
    if (!span)
      span = TimeSpan{s.start_ps, s.end_ps};
    else
      span = TimeSpan{std::min(span->begin_ps, s.start_ps), std::max(span->end_ps, s.end_ps)};
  }
  return span;
}

uint64_t count_events(const Profile& p, const std::optional<TimeSpan>& span) {
  uint64_t n = 0;
  if (!span) {
    for (const Line& line : p.lines) n += line.event_count;
    return n;
  }
  p.require_all_lines();
  const Events& ev = p.events;
  for (const Line& line : p.lines)
    for (uint32_t e = line.first_event; e < line.first_event + line.event_count; ++e) {
      int64_t s = ev.start_ps[e], d = ev.duration_ps[e];
      // As the export keeps them (render/perfetto/trace_window.h): overlapping, or an instant
      // inside.
      n += d <= 0 ? (s >= span->begin_ps && s <= span->end_ps)
                  : (s < span->end_ps && s + d > span->begin_ps);
    }
  return n;
}

namespace {

// The longest run numbers[from..k] that fits, by binary search (the count grows with the run).
std::optional<FittingSteps> longest_run(const Profile& p, const StepsResult& steps,
                                   const std::vector<int64_t>& numbers, size_t from,
                                   uint64_t max_events) {
  std::optional<FittingSteps> best;
  size_t lo = from, hi = numbers.size();
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    uint64_t n = count_events(p, steps_span(steps, numbers[from], numbers[mid]));
    if (n <= max_events) {
      best = FittingSteps{numbers[from], numbers[mid], n};
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return best;
}

}  // namespace

std::optional<FittingSteps> steps_that_fit(const Profile& p, const StepsResult& steps,
                                      uint64_t max_events) {
  if (steps.steps.empty()) return std::nullopt;
  std::vector<int64_t> numbers;
  for (const Step& s : steps.steps) numbers.push_back(s.number);
  std::sort(numbers.begin(), numbers.end());
  numbers.erase(std::unique(numbers.begin(), numbers.end()), numbers.end());
  // From the first steady step (warm-up steps hold the compiles, long and full of events), else
  // from the first.
  for (const Step& s : steps.steps)
    if (!s.warmup) {
      size_t from = std::lower_bound(numbers.begin(), numbers.end(), s.number) - numbers.begin();
      if (auto run = longest_run(p, steps, numbers, from, max_events)) return run;
      break;
    }
  return longest_run(p, steps, numbers, 0, max_events);
}

}  // namespace jaxprof
