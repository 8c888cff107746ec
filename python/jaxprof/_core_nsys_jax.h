// What jaxprof.compat.nsys_jax needs beyond the tables: a module's HLO (instructions,
// computations, stack frames) as plain Python values, and the flame SVG renderer over stacks the
// caller weighs itself.
#pragma once

#include <nanobind/nanobind.h>

#include "_core_tables.h"

namespace jaxprof {

void bind_nsys_jax(nanobind::module_& m, ProfileAccessor access);

}  // namespace jaxprof
