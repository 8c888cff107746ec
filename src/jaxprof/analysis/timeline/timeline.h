// "Is the device busy, and with what": per device, the span from the first op to the last, split
// exactly into computation, communication not hidden behind computation, memory copies hidden by
// neither, idle time (inside module executions, or between them), and the time set apart from
// the steady state (autotuning, warm-up and compiling: steady_state.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "jaxprof/analysis/ops/category.h"
#include "jaxprof/analysis/steps/steady_state.h"
#include "jaxprof/model/device_timeline.h"
#include "jaxprof/model/profile.h"

namespace jaxprof {

// What an op interval counts as on the timeline.
enum class TimelineKind : uint8_t { kCompute, kCommunication, kMemcpy };
TimelineKind timeline_kind(OpCategory c);


// Means over the devices (doubles: they need not be whole picoseconds).
struct TimelineAverage {
  double span_ps = 0, set_apart_ps = 0, busy_ps = 0, compute_ps = 0, comm_ps = 0,
         comm_exposed_ps = 0, memcpy_ps = 0, memcpy_exposed_ps = 0, idle_ps = 0,
         idle_in_modules_ps = 0, idle_between_modules_ps = 0;
};

struct TimelineResult {
  std::vector<DeviceTimeline> devices;  // devices with at least one op event
  TimelineAverage average;
};

// compute + comm_exposed + memcpy_exposed + idle + set_apart == span on every device, in exact
// integers. Reads the compile events of the host threads unless `steady.include_warmup`.
TimelineResult compute_timeline(const Profile& profile, const SteadyStateOptions& steady = {});

class PartialSet;
TimelineResult timeline_from_partials(const PartialSet& set, const SteadyStateOptions& steady = {});

}  // namespace jaxprof
