#include "jaxprof/analysis/ops/self_time.h"

#include <algorithm>
#include <numeric>

namespace jaxprof {

namespace {

// An event that may still contain later ones, with the running union of what it contains.
struct Open {
  uint32_t index;
  int64_t begin, end;
  int64_t covered = 0;  // union length of nested intervals seen so far
  int64_t cover_end;    // end of that union (children arrive in start order)
};

// The self times of `count` events given in (start asc, duration desc) order: the k-th event in
// that order is `at(k)` (its index in `self`), with timespan [begin(i), begin(i) + dur(i)).
template <typename At, typename Begin, typename Dur>
void self_times_in_order(uint32_t count, At at, Begin begin, Dur dur, std::vector<int64_t>& self,
                         const std::vector<uint8_t>* participates, int64_t tol) {
  self.assign(count, 0);
  std::vector<Open> open;
  for (uint32_t k = 0; k < count; ++k) {
    const uint32_t i = at(k);
    if (participates && !(*participates)[i]) continue;
    int64_t b = begin(i), d = dur(i), en = b + d;
    // Every open event that contains this one gets its clipped interval; expired ones leave.
    size_t keep = 0;
    for (size_t j = 0; j < open.size(); ++j) {
      Open& o = open[j];
      if (o.end + tol < b) continue;  // no later event can nest in it
      if (b >= o.begin - tol && en <= o.end + tol) {
        int64_t lo = std::max({b, o.begin, o.cover_end});
        int64_t hi = std::min(en, o.end);
        if (hi > lo) {
          o.covered += hi - lo;
          self[o.index] = (o.end - o.begin) - o.covered;
        }
        o.cover_end = std::max(o.cover_end, hi);
      }
      open[keep++] = o;
    }
    open.resize(keep);
    open.push_back(Open{i, b, en, 0, b});
    self[i] = d;
  }
}

}  // namespace

void compute_self_times(const Events& events, uint32_t first, uint32_t count,
                        std::vector<int64_t>& self, const std::vector<uint8_t>* participates,
                        int64_t tol) {
  const int64_t* start = events.start_ps.data() + first;
  const int64_t* dur = events.duration_ps.data() + first;
  self_times_in_order(
      count, [](uint32_t k) { return k; }, [&](uint32_t i) { return start[i]; },
      [&](uint32_t i) { return dur[i]; }, self, participates, tol);
}

void compute_op_self_times(const Events& events, const Line& line, std::vector<int64_t>& self,
                           const std::vector<uint8_t>* participates, int64_t tol) {
  const uint32_t first = line.first_event, count = line.event_count;
  if (!line.device_clock) {
    compute_self_times(events, first, count, self, participates, tol);
    return;
  }
  // Each event's device timespan where it has one, else its timeline one (as XProf does), read
  // from the columns in place.
  const int64_t* dstart = events.device_start_ps.data() + first;
  const int64_t* ddur = events.device_duration_ps.data() + first;
  const int64_t* tstart = events.start_ps.data() + first;
  const int64_t* tdur = events.duration_ps.data() + first;
  auto begin = [&](uint32_t i) { return ddur[i] != Events::kNoStat ? dstart[i] : tstart[i]; };
  auto dur = [&](uint32_t i) { return ddur[i] != Events::kNoStat ? ddur[i] : tdur[i]; };
  auto before = [&](uint32_t x, uint32_t y) {
    const int64_t bx = begin(x), by = begin(y);
    if (bx != by) return bx < by;
    const int64_t dx = dur(x), dy = dur(y);
    if (dx != dy) return dx > dy;
    return x < y;
  };
  bool sorted = true;
  for (uint32_t k = 1; k < count && sorted; ++k) sorted = before(k - 1, k);
  if (sorted) {
    self_times_in_order(count, [](uint32_t k) { return k; }, begin, dur, self, participates, tol);
    return;
  }
  // The device clock need not order the events as the timeline does, but it nearly does: an op
  // or two at the edge of a module execution. An insertion sort costs little more than the check
  // then (a full sort took 15 of 80 ms of `ops` on the 82 MB TPU benchmark profile); one that
  // would move too much gives way to a full sort.
  std::vector<uint32_t> order(count);
  std::iota(order.begin(), order.end(), 0u);
  uint64_t moves = 0;
  const uint64_t max_moves = 8 * uint64_t{count} + 1024;
  for (uint32_t k = 1; k < count && moves <= max_moves; ++k) {
    const uint32_t x = order[k];
    uint32_t j = k;
    for (; j > 0 && before(x, order[j - 1]); --j) order[j] = order[j - 1];
    order[j] = x;
    moves += k - j;
  }
  if (moves > max_moves) std::sort(order.begin(), order.end(), before);
  self_times_in_order(
      count, [&](uint32_t k) { return order[k]; }, begin, dur, self, participates, tol);
}

}  // namespace jaxprof
