// Interval arithmetic on integer picoseconds: unions, lengths and overlaps. Every "busy" number
// is a union, never a sum, because streams and threads overlap.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace jaxprof {

struct Interval {
  int64_t begin = 0;
  int64_t end = 0;  // exclusive
  int64_t length() const { return end - begin; }
  bool operator==(const Interval&) const = default;
};

// Sorts and merges in place; touching intervals ([0,5) and [5,9)) merge. Empty intervals vanish.
void merge_intervals(std::vector<Interval>& intervals);

// Adds [begin, end) to a merged list whose intervals all begin at or before `begin` (a sorted line
// read in order), merging as merge_intervals would: no list of every event to sort afterwards.
inline void append_merged(std::vector<Interval>& merged, int64_t begin, int64_t end) {
  if (end <= begin) return;  // empty: merge_intervals drops it
  if (!merged.empty() && begin <= merged.back().end)
    merged.back().end = std::max(merged.back().end, end);
  else
    merged.push_back({begin, end});
}

// Length of the union of `intervals` (sorted and merged in place).
int64_t union_length(std::vector<Interval>& intervals);

// Length of a ∩ b for two merged (sorted, disjoint) interval lists.
int64_t intersection_length(const std::vector<Interval>& a, const std::vector<Interval>& b);

// a minus b for two merged lists.
std::vector<Interval> subtract_intervals(const std::vector<Interval>& a,
                                         const std::vector<Interval>& b);

}  // namespace jaxprof
