#include "jaxprof/analysis/ops/self_time.h"

#include <algorithm>

namespace jaxprof {

namespace {

// An event that may still contain later ones, with the running union of what it contains.
struct Open {
  uint32_t index;
  int64_t begin, end;
  int64_t covered = 0;  // union length of nested intervals seen so far
  int64_t cover_end;    // end of that union (children arrive in start order)
};

// An event as the sweep takes it: its timespan [b, b + d) and its index in `self`.
struct Span {
  int64_t b, d;
  uint32_t i;
};

// Open events ordered so that the one whose union ends first is on top.
struct LaterCoverEnd {
  bool operator()(const Open& a, const Open& b) const { return a.cover_end > b.cover_end; }
};

// What event [b, en) does to open event `o`: false when `o` can never gain again (no later
// event can nest in it, or its union reached its end) and should leave.
inline bool meet(Open& o, int64_t b, int64_t en, int64_t tol, std::vector<int64_t>& self) {
  if (o.end + tol < b) return false;  // no later event can nest in it
  if (b >= o.begin - tol && en <= o.end + tol) {
    // The part of this event inside `o` and past the union so far.
    const int64_t lo = std::max({b, o.begin, o.cover_end});
    const int64_t hi = std::min(en, o.end);
    if (hi > lo) {
      o.covered += hi - lo;
      self[o.index] = (o.end - o.begin) - o.covered;
    }
    o.cover_end = std::max(o.cover_end, hi);
    if (o.cover_end >= o.end) return false;  // wholly covered: nothing more to gain
  }
  return true;
}

// Fills `self` (of `size` entries) with the self times of the events `item(k, e)` gives for k
// in [0, count), in (start asc, duration desc) order; `item` returns false for an event that
// takes no part (its self time stays 0).
template <typename Item>
void self_times_in_order(uint32_t count, uint32_t size, Item item, std::vector<int64_t>& self,
                         int64_t tol) {
  self.assign(size, 0);
  // Open events in one of two forms. While few are open (ops nest one to three deep), a list
  // that every event visits: on the 82 MB TPU benchmark profile it took 3.4 ms where a heap took
  // 14 ms. Once more than kDeep are open, a heap by union end: an event [b, en) adds to an open
  // event's union only where it passes that union's end, so only the open events whose union
  // ends before `en` are visited (in nested data, the event's parent and the expired events
  // before it). That keeps 1,000-deep nesting O(n log n): the list was O(n x depth), 63% of
  // `ops` on a profile whose op copies stacked about 100 deep. Both forms leave the same events
  // open with the same unions, so the self times do not depend on which one ran; a heap is a
  // list too, so the way back needs no work.
  constexpr size_t kDeep = 32, kShallow = 8;
  const LaterCoverEnd later;
  std::vector<Open> open, visited;
  bool heap = false;
  for (uint32_t k = 0; k < count; ++k) {
    Span e;
    if (!item(k, e)) continue;
    const uint32_t i = e.i;
    const int64_t b = e.b, d = e.d, en = b + d;
    if (!heap) {
      size_t keep = 0;
      for (size_t j = 0; j < open.size(); ++j) {
        // Met in registers and stored once: reading back fields just stored one by one stalls
        // the store buffer (a quarter of the sweep's time on the TPU benchmark profile).
        Open o = open[j];
        if (meet(o, b, en, tol, self)) open[keep++] = o;
      }
      open.resize(keep);
    } else {
      while (!open.empty() && open.front().cover_end < en) {
        std::pop_heap(open.begin(), open.end(), later);
        if (meet(open.back(), b, en, tol, self)) visited.push_back(open.back());
        open.pop_back();
      }
      for (const Open& o : visited) {
        open.push_back(o);
        std::push_heap(open.begin(), open.end(), later);
      }
      visited.clear();
      heap = open.size() >= kShallow;
    }
    self[i] = d;
    if (d <= 0) continue;  // an empty event contains nothing
    open.push_back(Open{i, b, en, 0, b});
    if (heap) {
      std::push_heap(open.begin(), open.end(), later);
    } else if (open.size() > kDeep) {
      std::make_heap(open.begin(), open.end(), later);
      heap = true;
    }
  }
}

}  // namespace

void compute_self_times(const Events& events, uint32_t first, uint32_t count,
                        std::vector<int64_t>& self, const std::vector<uint8_t>* participates,
                        int64_t tol) {
  const int64_t* start = events.start_ps.data() + first;
  const int64_t* dur = events.duration_ps.data() + first;
  auto item = [=](uint32_t k, Span& e) {
    e = Span{start[k], dur[k], k};
    return !participates || (*participates)[k];
  };
  self_times_in_order(count, count, item, self, tol);
}

void compute_op_self_times(const Events& events, const Line& line, std::vector<int64_t>& self,
                           const std::vector<uint8_t>* participates, int64_t tol) {
  const uint32_t first = line.first_event, count = line.event_count;
  if (!line.device_clock) {
    compute_self_times(events, first, count, self, participates, tol);
    return;
  }
  // Each event's device timespan where it has one, else its timeline one (as XProf does).
  const int64_t* dstart = events.device_start_ps.data() + first;
  const int64_t* ddur = events.device_duration_ps.data() + first;
  const int64_t* tstart = events.start_ps.data() + first;
  const int64_t* tdur = events.duration_ps.data() + first;
  auto span = [=](uint32_t k) {
    return ddur[k] != Events::kNoStat ? Span{dstart[k], ddur[k], k} : Span{tstart[k], tdur[k], k};
  };
  auto before = [&](uint32_t x, uint32_t y) {
    const Span sx = span(x), sy = span(y);
    if (sx.b != sy.b) return sx.b < sy.b;
    if (sx.d != sy.d) return sx.d > sy.d;
    return x < y;  // equal spans keep the line's order
  };
  // The device clock need not order a line's events as the timeline does, but it nearly does:
  // on the 82 MB TPU benchmark profile 1% of each line's ops sit before their predecessor (ops
  // at the edge of a module execution). An insertion sort of the events' positions costs little
  // more than a pass then (a full sort took 15 of 80 ms of `ops` there); one that would move too
  // much gives way to a full sort. Positions (4 bytes an event) rather than the spans themselves
  // (24): gathering the spans saved a tenth of this function and held six times the memory.
  std::vector<uint32_t> order(count);
  uint32_t n = 0;
  uint64_t moves = 0;
  const uint64_t max_moves = 8 * uint64_t{count} + 1024;
  for (uint32_t k = 0; k < count; ++k) {
    if (participates && !(*participates)[k]) continue;
    uint32_t j = n++;
    if (moves <= max_moves) {
      for (; j > 0 && before(k, order[j - 1]); --j) order[j] = order[j - 1];
      moves += n - 1 - j;
    }
    order[j] = k;
  }
  if (moves > max_moves) std::sort(order.begin(), order.begin() + n, before);
  auto item = [&](uint32_t k, Span& e) {
    e = span(order[k]);
    return true;
  };
  self_times_in_order(n, count, item, self, tol);
}

}  // namespace jaxprof
