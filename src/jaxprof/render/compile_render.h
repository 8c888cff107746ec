#pragma once

#include <string>

#include "jaxprof/analysis/compile.h"
#include "jaxprof/render/text.h"

namespace jaxprof {

std::string render_compile(const CompileResult& result, OutputFormat format);

}  // namespace jaxprof
