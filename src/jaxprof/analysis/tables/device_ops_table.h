// device_ops: one row per device op event, the events `ops` counts (set-apart ones included and
// marked), with the op's clock as `ops` reads it (op_clock.h), its self time, its module
// execution and step, what the HLO says about it, and the cost model's FLOPs and bytes.
#pragma once

#include "jaxprof/analysis/tables/table.h"
#include "jaxprof/model/profile.h"

namespace jaxprof {

RecordTable device_ops_table(const Profile& profile);

}  // namespace jaxprof
