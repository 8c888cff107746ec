// How far each host's clock is from the others', judged by when collectives end: a collective
// ends at nearly the same instant on every device it spans, so the typical gap between a device's
// end time and the mean end time over devices is clock skew, not work. This is the rule nsys-jax
// aligns processes by (align_profiler_data_timestamps).
#pragma once

#include <cstdint>
#include <vector>

#include "jaxprof/model/profile.h"

namespace jaxprof {

struct ClockSkew {
  std::vector<int64_t> host_skew_ps;  // per host: median of its collectives' end-time skews
  size_t collectives = 0;             // collectives seen on every device (those used)
  size_t devices = 0;
};

// Collectives are matched across devices by program id, execution of the program on the device,
// HLO op and occurrence within that execution (from the "XLA Modules" and "XLA Thunks" lines and
// the HLO index); only those seen on every device count. A host with several devices takes the
// median over all of them (one process, one clock). Hosts without such collectives get 0.
ClockSkew collective_end_skews(const Profile& profile);

}  // namespace jaxprof
