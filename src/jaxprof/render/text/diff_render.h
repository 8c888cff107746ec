#pragma once

#include <string>

#include "jaxprof/analysis/stats/diff.h"
#include "jaxprof/render/text/text.h"

namespace jaxprof {

// `top`: op rows in the table (0 = all); JSON and CSV always hold every row.
std::string render_diff(const DiffResult& result, OutputFormat format, size_t top = 20);

// The step row in words ("train steps, 5.1 ms -> 12.3 ms per step (+141.2%, ...)"), or why there
// is none.
std::string step_text(const DiffResult& result);

}  // namespace jaxprof
