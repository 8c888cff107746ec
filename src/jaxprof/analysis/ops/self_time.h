// Self time: an event's duration minus the union of the events nested in it on the same line.
#pragma once

#include <cstdint>
#include <vector>

#include "jaxprof/model/profile.h"

namespace jaxprof {

// Clock jitter between a parent and its children (a few ns) must not un-nest them.
inline constexpr int64_t kNestingTolerancePs = 1000;

// For the events [first, first + count) of one line, sorted by (start asc, duration desc), writes
// self[i - first]. An event B is nested in A when A comes first in that order and
// A.start - tol <= B.start and B.end <= A.end + tol; nested intervals are clipped to A before the
// union is taken, so self time is never negative. When `participates` is given, only events with
// participates[i - first] != 0 count as children (and get a self time; others get 0).
void compute_self_times(const Events& events, uint32_t first, uint32_t count,
                        std::vector<int64_t>& self,
                        const std::vector<uint8_t>* participates = nullptr,
                        int64_t tolerance_ps = kNestingTolerancePs);

// Self times of the op events of one whole line, on the clock op durations come from: the
// device's own (Events::device_start_ps/device_duration_ps) where the line's events carry it, so
// that nesting is decided on the same clock as the durations (a host-aligned copy may clip an op
// to nothing, or stretch it over its neighbour); else as compute_self_times. self[k] is the self
// time of event line.first_event + k; `participates` as for compute_self_times.
void compute_op_self_times(const Events& events, const Line& line, std::vector<int64_t>& self,
                           const std::vector<uint8_t>* participates = nullptr,
                           int64_t tolerance_ps = kNestingTolerancePs);

}  // namespace jaxprof
