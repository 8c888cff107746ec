#pragma once

#include <string>

#include "jaxprof/analysis/compile/compile.h"
#include "jaxprof/render/text/text.h"

namespace jaxprof {

// `top`: the table lists this many modules and details this many compiles, the longest
// (0 = all). JSON and CSV are always complete.
std::string render_compile(const CompileResult& result, OutputFormat format, size_t top = 0);

}  // namespace jaxprof
