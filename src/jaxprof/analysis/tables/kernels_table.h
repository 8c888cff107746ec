// kernels: one row per GPU kernel launch, the launches `kernels` counts (those of set-apart
// executions included and marked), with its launch configuration and resources as the
// kernel_details stat gives them (kernel_details.h): null where the producer does not say.
#pragma once

#include "jaxprof/analysis/tables/table.h"
#include "jaxprof/model/profile.h"

namespace jaxprof {

RecordTable kernels_table(const Profile& profile);

}  // namespace jaxprof
