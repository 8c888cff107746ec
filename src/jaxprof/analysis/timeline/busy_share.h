// Splits a device's busy time among its op events exactly, so that per-op weights add up to the
// busy time (the union of the op intervals) to the picosecond. Flamegraphs need this: a sum of
// durations or of self times double-counts whenever streams overlap.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "jaxprof/model/profile.h"

namespace jaxprof {

// Rules, for the events of `lines` that `counts` accepts:
// - on one line, each instant belongs to the innermost open event: the one that started last
//   (events are sorted by start, longest first, so of two events starting together the shorter);
// - an instant covered by k lines is split equally between their innermost events; the
//   picoseconds that do not divide go one each to the events of the earlier lines (in `lines`
//   order), so weights stay integers and their sum is exactly the busy time.
// A device with one op line whose events carry the device clock (TPU) is measured on that clock,
// so that the weights are the ops' self times on the clock their durations come from; their sum
// is then the device-clock busy time, not the timeline's.
// Calls `add(event, picoseconds)` once or more per event with a positive share. Lines must be
// decoded.
void share_busy_time(const Events& events, const std::vector<Line>& all_lines,
                     const std::vector<uint32_t>& lines,
                     const std::function<bool(uint32_t event)>& counts,
                     const std::function<void(uint32_t event, int64_t ps)>& add);

}  // namespace jaxprof
