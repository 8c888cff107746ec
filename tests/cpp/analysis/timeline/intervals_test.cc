#include "jaxprof/analysis/timeline/intervals.h"

#include <gtest/gtest.h>

namespace jaxprof {
namespace {

TEST(Intervals, UnionOfOverlappingNestedAndDisjoint) {
  std::vector<Interval> v = {{10, 20}, {0, 5}, {15, 30}, {16, 18}, {40, 50}};
  EXPECT_EQ(union_length(v), 5 + 20 + 10);
  EXPECT_EQ(v, (std::vector<Interval>{{0, 5}, {10, 30}, {40, 50}}));
}

TEST(Intervals, TouchingIntervalsMerge) {
  std::vector<Interval> v = {{0, 5}, {5, 9}};
  EXPECT_EQ(union_length(v), 9);
  EXPECT_EQ(v.size(), 1u);
}

TEST(Intervals, IdenticalIntervalsCountOnce) {
  std::vector<Interval> v = {{3, 7}, {3, 7}, {3, 7}};
  EXPECT_EQ(union_length(v), 4);
}

TEST(Intervals, EmptyIntervalsVanish) {
  std::vector<Interval> v = {{3, 3}, {8, 2}};
  EXPECT_EQ(union_length(v), 0);
  EXPECT_TRUE(v.empty());
}

TEST(Intervals, IntersectionAndSubtraction) {
  std::vector<Interval> a = {{0, 10}, {20, 30}};
  std::vector<Interval> b = {{5, 25}};
  EXPECT_EQ(intersection_length(a, b), 5 + 5);
  EXPECT_EQ(subtract_intervals(a, b), (std::vector<Interval>{{0, 5}, {25, 30}}));
  EXPECT_EQ(subtract_intervals(b, a), (std::vector<Interval>{{10, 20}}));
  EXPECT_EQ(subtract_intervals(a, {}), a);
  EXPECT_TRUE(subtract_intervals(b, {{0, 100}}).empty());
}

TEST(Intervals, LargePicosecondValuesStayExact) {
  // Two days in picoseconds; doubles would lose the last digits.
  const int64_t day = int64_t{86400} * 1000 * 1000 * 1000 * 1000;
  std::vector<Interval> v = {{day, day + 3}, {2 * day, 2 * day + 1}};
  EXPECT_EQ(union_length(v), 4);
}

}  // namespace
}  // namespace jaxprof
