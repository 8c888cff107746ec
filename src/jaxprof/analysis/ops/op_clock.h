// Which clock an op's duration comes from. TPU op events carry the chip's own measurement
// (device_offset_ps, device_duration_ps) beside a host-aligned copy; op durations and self times
// use the device's own clock where an event has it, placement on the timeline (busy and idle
// unions, overlap, span, start times) always uses the host-aligned one. docs/clocks.md.
#pragma once

#include <cstdint>

namespace jaxprof {

enum class DurationClock : uint8_t {
  kTimeline,  // no event carried the device clock: durations are the timeline's
  kDevice,    // every event did
  kMixed,     // some did
};

inline DurationClock duration_clock(uint64_t device_clock_events, uint64_t events) {
  if (device_clock_events == 0) return DurationClock::kTimeline;
  return device_clock_events >= events ? DurationClock::kDevice : DurationClock::kMixed;
}

inline const char* duration_clock_name(DurationClock c) {
  switch (c) {
    case DurationClock::kTimeline:
      return "timeline";
    case DurationClock::kDevice:
      return "device";
    case DurationClock::kMixed:
      return "mixed";
  }
  return "timeline";
}

}  // namespace jaxprof
