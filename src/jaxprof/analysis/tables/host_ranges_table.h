// host_ranges: one row per event of every host thread (annotations, TraceMe ranges, launches,
// compile events, Python frames when traced, the CPU backend's ops), with its nesting on its
// thread and its correlation id (what ties a launch to the kernels it launched).
#pragma once

#include "jaxprof/analysis/tables/table.h"
#include "jaxprof/model/profile.h"

namespace jaxprof {

RecordTable host_ranges_table(const Profile& profile);

}  // namespace jaxprof
