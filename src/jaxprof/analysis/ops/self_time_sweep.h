// Self times of one line's events by one backward sweep: O(n log n) however deep they nest.
#pragma once

#include <cstddef>
#include <cstdint>

namespace jaxprof {

// For n events in processing order with begin[k] nondecreasing, end[k] >= begin[k] and tol >= 0,
// writes self[k] = (end[k] - begin[k]) minus the length of [begin[k], end[k]) covered by the
// events q > k with end[q] <= end[k] + tol. That is what the scan of open events in self_time.cc
// computes for such input (the argument is there). Each event costs a binary search and amortised
// O(1), except one that a later event crosses (starts inside it and ends beyond end[k] + tol):
// its union is taken directly over the events that start inside it, as the scan would.
void sweep_self_times(const int64_t* begin, const int64_t* end, size_t n, int64_t tol,
                      int64_t* self);

}  // namespace jaxprof
