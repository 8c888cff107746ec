// What the steady-state figures leave out (analysis/steps/steady_state.h), said the same way by every
// command: one line for people, one JSON object for scripts.
#pragma once

#include <string>

#include "jaxprof/analysis/steps/steady_state.h"

namespace jaxprof {

// "set apart: autotuning 85 executions of 12 modules (1.100 s, 41% of execution time); warm-up
// ...; compiling 17 compiles (69.388 s): --include-autotuning, --include-warmup count them";
// empty when nothing was set apart.
std::string render_set_apart_line(const SetApartSummary& set_apart);
// {"include_autotuning": bool, "include_warmup": bool,
//  "autotuning": {"counted": bool, "executions", "op_events", "execution_ns", "share", "modules"},
//  "warmup": {...}, "compiling": {"counted": bool, "compiles", "wall_ns"} (with compiles)}
std::string render_set_apart_json(const SetApartSummary& set_apart);

}  // namespace jaxprof
