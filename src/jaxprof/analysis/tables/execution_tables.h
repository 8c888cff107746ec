// module_executions (one row per run of a compiled program on one device, as `modules` counts
// them) and steps (one row per step, as `modules` and `steps` report them).
#pragma once

#include "jaxprof/analysis/tables/table.h"
#include "jaxprof/model/profile.h"

namespace jaxprof {

RecordTable module_executions_table(const Profile& profile);
RecordTable steps_table(const Profile& profile);

}  // namespace jaxprof
