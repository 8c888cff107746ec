// What compile_records.cc (each host's compiles, read from a profile) and compile.cc (the result,
// from partials) share: a record's phases before any time is added, and the order of its steps.
#pragma once

#include <vector>

#include "jaxprof/model/compile_record.h"

namespace jaxprof::compile_detail {

// One zero entry per phase, in phase order.
std::vector<CompilePhaseTime> empty_phases();

// Steps by wall time, then thread time, descending, then by name.
void sort_steps(std::vector<CompileStepTime>& steps);

}  // namespace jaxprof::compile_detail
