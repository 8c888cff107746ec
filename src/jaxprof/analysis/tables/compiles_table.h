// compiles: one row per compile (a jit cache miss, as `compile` finds them) with its wall time
// split into phases; compile_passes: one row per compile and event name along that split (the
// HLO passes, codegen steps, JAX stages), as `compile` lists a compile's steps.
#pragma once

#include "jaxprof/analysis/tables/table.h"
#include "jaxprof/model/profile.h"

namespace jaxprof {

RecordTable compiles_table(const Profile& profile);
RecordTable compile_passes_table(const Profile& profile);

}  // namespace jaxprof
