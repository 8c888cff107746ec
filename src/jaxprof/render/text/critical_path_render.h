#pragma once

#include <string>

#include "jaxprof/analysis/critical_path/critical_path.h"
#include "jaxprof/render/text/text.h"

namespace jaxprof {

// JSON: every step with its path, ops and predictions; CSV: one row per op of each step; table:
// the steps, the path and ops of the slowest steady step (`top` rows each, 0 = all), the what-ifs.
std::string render_critical_path(const CriticalPathResult& result, OutputFormat format,
                                 size_t top);

}  // namespace jaxprof
