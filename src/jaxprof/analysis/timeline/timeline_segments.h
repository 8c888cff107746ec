// The timeline of `jaxprof timeline` as intervals rather than totals: per device, disjoint
// segments of compute, exposed communication, exposed memcpy and idle time that tile the span
// exactly, for tracks that show where each part lies (the Perfetto export).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "jaxprof/analysis/timeline/intervals.h"
#include "jaxprof/analysis/steps/steady_state.h"
#include "jaxprof/model/profile.h"

namespace jaxprof {

enum class SegmentKind : uint8_t {
  kCompute,
  kCommunication,  // not overlapped by compute
  kMemcpy,         // overlapped by neither compute nor communication
  kIdleInModule,
  kIdleBetweenModules,
  kSetApart,  // not steady state (steady_state.h)
};
const char* segment_kind_name(SegmentKind k);

struct Segment {
  Interval interval;
  SegmentKind kind = SegmentKind::kCompute;
};

struct DeviceSegments {
  std::string device;             // as op_devices() names it
  std::vector<Segment> segments;  // by start; they tile [first op start, last op end)
};

// Devices with op events, in the order of compute_timeline(); the segment lengths per kind equal
// its compute, comm_exposed, memcpy_exposed, idle_in_modules, idle_between_modules and
// set_apart for the same options.
std::vector<DeviceSegments> timeline_segments(const Profile& profile,
                                              const SteadyStateOptions& steady = {});

}  // namespace jaxprof
