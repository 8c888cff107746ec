// How tables say which clock op durations come from (analysis/ops/op_clock.h).
#pragma once

#include <fmt/format.h>

#include <string>

#include "jaxprof/analysis/ops/op_clock.h"

namespace jaxprof {

// "" when every duration is the timeline's; else a note to append to a device's heading line.
inline std::string duration_clock_note(uint64_t device_clock_events, uint64_t events) {
  switch (duration_clock(device_clock_events, events)) {
    case DurationClock::kTimeline:
      return {};
    case DurationClock::kDevice:
      return "  (op times on the device clock)";
    case DurationClock::kMixed:
      return fmt::format("  (op times on the device clock for {} of {} events)",
                         device_clock_events, events);
  }
  return {};
}

}  // namespace jaxprof
