// Per-name device time of one plane, with the semantics autotuners (ejkernel's Profiler) rely
// on: an event is keyed "NAME(PROGRAM_ID-SCOPE_RANGE_ID)" where NAME is its hlo_module stat (or
// its metadata name); a key's time is the union of its events' intervals, or, with a regex, the
// union of the intervals of the events nested inside them whose key matches the regex.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "jaxprof/model/profile.h"

namespace jaxprof {

struct PlaneTimingOptions {
  std::string prefix;           // keys must start with this ("" = all)
  std::string regex;            // RE2, searched in child keys; "" = time events themselves
  int64_t min_duration_ps = 0;  // shorter events are ignored (as parents and as children)
  uint64_t max_events = 0;      // 0 = no cap; else only the first N events kept (line order)
  uint32_t threads = 0;         // readers; 0 = one per 200k events, up to the hardware's threads
};

struct TimedKey {
  std::string key;
  int64_t time_ps = 0;       // union length
  uint64_t occurrences = 0;  // events with this key that passed the prefix
};

// Keys in order of their first event's start. Throws InputError for an invalid regex or a
// plane index out of range.
std::vector<TimedKey> plane_timed_events(const Profile& profile, uint32_t plane,
                                         const PlaneTimingOptions& options);

// The key of one event (its line must be decoded).
std::string event_timing_key(const Profile& profile, uint32_t plane, uint32_t event);

}  // namespace jaxprof
