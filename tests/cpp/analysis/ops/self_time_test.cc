#include "jaxprof/analysis/ops/self_time.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <random>

namespace jaxprof {
namespace {

// Builds one line of events from (start, duration) pairs, already in (start, -duration) order.
Events line(std::vector<std::pair<int64_t, int64_t>> spans) {
  Events ev;
  ev.resize(spans.size());
  for (size_t i = 0; i < spans.size(); ++i) {
    ev.start_ps[i] = spans[i].first;
    ev.duration_ps[i] = spans[i].second;
  }
  return ev;
}

std::vector<int64_t> self_of(const Events& ev, int64_t tol = kNestingTolerancePs) {
  std::vector<int64_t> self;
  compute_self_times(ev, 0, static_cast<uint32_t>(ev.size()), self, nullptr, tol);
  return self;
}

TEST(SelfTime, FlatEventsKeepTheirDuration) {
  EXPECT_EQ(self_of(line({{0, 10}, {20, 5}, {30, 7}})), (std::vector<int64_t>{10, 5, 7}));
}

TEST(SelfTime, NestedChildrenAreSubtractedOnce) {
  // parent [0,100) holds a [10,40) which holds b [20,30), and c [50,60).
  auto self = self_of(line({{0, 100}, {10, 30}, {20, 10}, {50, 10}}), 0);
  EXPECT_EQ(self, (std::vector<int64_t>{100 - 30 - 10, 30 - 10, 10, 10}));
}

TEST(SelfTime, OverlappingChildrenUseTheirUnion) {
  // Children [10,30) and [20,50) are not nested in each other; their union is 40.
  auto self = self_of(line({{0, 100}, {10, 20}, {20, 30}}), 0);
  EXPECT_EQ(self[0], 60);
  EXPECT_EQ(self[1], 20);
  EXPECT_EQ(self[2], 30);
}

TEST(SelfTime, IdenticalIntervalsTheSecondIsTheChild) {
  auto self = self_of(line({{0, 50}, {0, 50}}), 0);
  EXPECT_EQ(self, (std::vector<int64_t>{0, 50}));
}

TEST(SelfTime, TouchingEventsDoNotNest) {
  auto self = self_of(line({{0, 10}, {10, 10}}), 0);
  EXPECT_EQ(self, (std::vector<int64_t>{10, 10}));
}

TEST(SelfTime, ToleranceKeepsJitteredChildrenNestedAndClipped) {
  // The child ends 500 ps after its parent: clock jitter. It nests, clipped to the parent.
  auto self = self_of(line({{0, 10000}, {4000, 6500}}));
  EXPECT_EQ(self[0], 4000);
  EXPECT_EQ(self[1], 6500);
  // Beyond the tolerance it is not a child.
  auto apart = self_of(line({{0, 10000}, {4000, 8000}}));
  EXPECT_EQ(apart[0], 10000);
}

TEST(SelfTime, ParticipationMaskIgnoresOtherEvents) {
  Events ev = line({{0, 100}, {10, 50}, {20, 10}});
  std::vector<uint8_t> mask = {1, 0, 1};
  std::vector<int64_t> self;
  compute_self_times(ev, 0, 3, self, &mask, 0);
  EXPECT_EQ(self, (std::vector<int64_t>{90, 0, 10}));
}

TEST(SelfTime, NeverNegative) {
  auto self = self_of(line({{0, 10}, {0, 10}, {0, 10}, {2, 3}}), 0);
  for (int64_t s : self) EXPECT_GE(s, 0);
  EXPECT_EQ(self[0], 0);
  EXPECT_EQ(self[3], 3);
}

}  // namespace
}  // namespace jaxprof

namespace jaxprof {
namespace {

// A line of events whose device clock orders and nests them differently from the timeline.
TEST(SelfTime, OpSelfTimesUseTheDeviceClock) {
  Events ev;
  ev.resize(3);
  // Timeline: a [0,10), c [10,20), b [10,10) clipped to nothing (sorted: a, c, b).
  const int64_t start[] = {0, 10, 10}, dur[] = {10, 10, 0};
  // Device clock: a [100,110), c [118,128), b [110,118): one after another, none nested.
  const int64_t dstart[] = {100, 118, 110}, ddur[] = {10, 10, 8};
  for (int i = 0; i < 3; ++i) {
    ev.start_ps[i] = start[i];
    ev.duration_ps[i] = dur[i];
    ev.device_start_ps[i] = dstart[i];
    ev.device_duration_ps[i] = ddur[i];
  }
  Line line;
  line.first_event = 0;
  line.event_count = 3;
  line.device_clock = true;
  std::vector<int64_t> self;
  compute_op_self_times(ev, line, self, nullptr, 0);
  EXPECT_EQ(self, (std::vector<int64_t>{10, 10, 8}));
  EXPECT_EQ(ev.op_duration_ps(line, 2), 8);

  // A parent and a child on the device clock.
  ev.device_start_ps[0] = 100;
  ev.device_duration_ps[0] = 40;
  ev.device_start_ps[1] = 110;
  ev.device_duration_ps[1] = 10;
  ev.device_start_ps[2] = 150;
  ev.device_duration_ps[2] = Events::kNoStat;  // no device clock: its timeline span [10, 10)
  compute_op_self_times(ev, line, self, nullptr, 0);
  EXPECT_EQ(self[0], 30);
  EXPECT_EQ(self[1], 10);
  EXPECT_EQ(self[2], 0);

  line.device_clock = false;  // the timeline alone
  compute_op_self_times(ev, line, self, nullptr, 0);
  EXPECT_EQ(self, (std::vector<int64_t>{10, 10, 0}));
}

}  // namespace
}  // namespace jaxprof

namespace jaxprof {
namespace {

// The definition, directly: for each event, the union of the later events (in order) that nest
// in it, clipped to it. O(n^2), for checking the sweep on small lines.
std::vector<int64_t> self_by_definition(const std::vector<std::pair<int64_t, int64_t>>& spans,
                                        int64_t tol) {
  std::vector<int64_t> self(spans.size());
  for (size_t a = 0; a < spans.size(); ++a) {
    const int64_t ab = spans[a].first, ae = ab + spans[a].second;
    std::vector<std::pair<int64_t, int64_t>> inside;
    for (size_t c = a + 1; c < spans.size(); ++c) {
      const int64_t cb = spans[c].first, ce = cb + spans[c].second;
      if (cb >= ab - tol && ce <= ae + tol) {
        const int64_t lo = std::max(cb, ab), hi = std::min(ce, ae);
        if (hi > lo) inside.emplace_back(lo, hi);
      }
    }
    std::sort(inside.begin(), inside.end());
    int64_t covered = 0, reach = ab;
    for (auto [lo, hi] : inside) {
      lo = std::max(lo, reach);
      if (hi > lo) covered += hi - lo;
      reach = std::max(reach, hi);
    }
    self[a] = spans[a].second - covered;
  }
  return self;
}

TEST(SelfTime, TheSweepMatchesTheDefinitionOnRandomLines) {
  std::mt19937_64 rng(12345);
  for (int round = 0; round < 300; ++round) {
    const int n = 1 + static_cast<int>(rng() % 60);
    const int64_t tol = (round % 3) * 3;  // 0, 3, 6: jitter as large as some durations
    std::vector<std::pair<int64_t, int64_t>> spans;
    for (int i = 0; i < n; ++i) {
      // Short spans on a short axis: nesting, partial overlaps, ties and zero lengths.
      spans.emplace_back(static_cast<int64_t>(rng() % 200),
                         static_cast<int64_t>(rng() % (round % 2 ? 120 : 20)));
    }
    std::sort(spans.begin(), spans.end(), [](auto x, auto y) {
      return x.first != y.first ? x.first < y.first : x.second > y.second;
    });
    ASSERT_EQ(self_of(line(spans), tol), self_by_definition(spans, tol)) << "round " << round;
  }
}

// Blocks of events nested `depth` deep: event k of a block spans [k, 2 * depth - k) from the
// block's start, so each has self time 2 (1 ps on each side of its child) and the innermost 2.
std::vector<std::pair<int64_t, int64_t>> nested_blocks(int blocks, int depth) {
  std::vector<std::pair<int64_t, int64_t>> spans;
  for (int blk = 0; blk < blocks; ++blk) {
    const int64_t at = int64_t{blk} * 4 * depth;
    for (int k = 0; k < depth; ++k) spans.emplace_back(at + k, 2 * (depth - k));
  }
  return spans;
}

// Seconds of the fastest of three sweeps over `spans` on the timeline clock, after checking that
// every event's self time is 2.
double sweep_seconds(const std::vector<std::pair<int64_t, int64_t>>& spans) {
  Events ev = line(spans);
  double best = 1e9;
  for (int run = 0; run < 3; ++run) {
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<int64_t> self;
    compute_self_times(ev, 0, static_cast<uint32_t>(ev.size()), self, nullptr, 0);
    best = std::min(best,
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    for (size_t i = 0; i < self.size(); ++i) EXPECT_EQ(self[i], 2) << i;
  }
  return best;
}

TEST(SelfTime, ThousandDeepNestingCostsAboutWhatShallowNestingDoes) {
  // The same 100,000 events nested 1,000 deep and 10 deep. Visiting every open event for every
  // event made the deep line about a hundred times the shallow one (a million events 1,000 deep
  // took 1.0 s in a release build); with the heap it is 9 times in a release build and 5 times
  // under the address sanitizer (0.23 s for that million). Comparing the two within one run holds
  // in sanitizer builds too, where both are slower.
  const double deep = sweep_seconds(nested_blocks(100, 1000));
  const double shallow = sweep_seconds(nested_blocks(10000, 10));
  EXPECT_LT(deep, 25 * shallow + 0.01) << deep << " s against " << shallow << " s";
}

TEST(SelfTime, ThousandDeepNestingOnTheDeviceClock) {
  // The same blocks on the device clock, with the timeline order reversed within each block so
  // the device clock's order must be sorted out first.
  const int blocks = 200, depth = 1000;
  const auto spans = nested_blocks(blocks, depth);
  Events ev = line(spans);
  for (size_t i = 0; i < spans.size(); ++i) {
    ev.device_start_ps[i] = spans[i].first;
    ev.device_duration_ps[i] = spans[i].second;
    ev.start_ps[i] = static_cast<int64_t>(spans.size() - i);  // timeline: meaningless order
    ev.duration_ps[i] = 1;
  }
  std::reverse(ev.device_start_ps.begin(), ev.device_start_ps.end());
  std::reverse(ev.device_duration_ps.begin(), ev.device_duration_ps.end());
  Line l;
  l.first_event = 0;
  l.event_count = static_cast<uint32_t>(spans.size());
  l.device_clock = true;
  std::vector<int64_t> self;
  compute_op_self_times(ev, l, self, nullptr, 0);  // 0.05 s in a release build (0.22 s before)
  for (size_t i = 0; i < self.size(); ++i) ASSERT_EQ(self[i], 2) << i;
}

}  // namespace
}  // namespace jaxprof
