#pragma once

#include <string>

#include "jaxprof/analysis/diff.h"
#include "jaxprof/render/text.h"

namespace jaxprof {

// `top`: op rows in the table (0 = all); JSON and CSV always hold every row.
std::string render_diff(const DiffResult& result, OutputFormat format, size_t top = 20);

}  // namespace jaxprof
