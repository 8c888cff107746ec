// Analyses over every op event: the reference figures many tests check were measured over the
// whole capture, autotuning, warm-up and compiling included (steady_state.h sets them apart by
// default).
#pragma once

#include "jaxprof/analysis/steps/steady_state.h"

namespace jaxprof::testing {

inline constexpr SteadyStateOptions kAllWork{.include_autotuning = true, .include_warmup = true};

}  // namespace jaxprof::testing
