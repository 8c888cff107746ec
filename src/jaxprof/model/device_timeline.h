// What one device's time went to: busy (compute, communication, memcpy and what of them is
// exposed), idle, and the time set apart from the steady state. analysis/timeline computes it.
#pragma once

#include <cstdint>
#include <string>

namespace jaxprof {

struct DeviceTimeline {
  std::string device;
  std::string host;
  uint64_t events = 0;                  // op events on the device
  uint64_t executions = 0;              // module executions on the device
  int64_t span_ps = 0;                  // last op end - first op start
  int64_t busy_ps = 0;                  // |C ∪ M ∪ Y| (steady-state time only, as below)
  int64_t compute_ps = 0;               // |C|: union of compute op intervals
  int64_t comm_ps = 0;                  // |M|: union of communication op intervals
  int64_t comm_exposed_ps = 0;          // |M \ C|
  int64_t memcpy_ps = 0;                // |Y|
  int64_t memcpy_exposed_ps = 0;        // |Y \ (C ∪ M)|
  int64_t set_apart_ps = 0;             // not steady state: set-apart executions, compiling
  int64_t idle_ps = 0;                  // span - set_apart - busy
  int64_t idle_in_modules_ps = 0;       // idle inside the union of module execution spans
  int64_t idle_between_modules_ps = 0;  // the rest of idle
};

}  // namespace jaxprof
