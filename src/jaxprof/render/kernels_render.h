#pragma once

#include <string>

#include "jaxprof/analysis/kernels.h"
#include "jaxprof/render/text.h"

namespace jaxprof {

std::string render_kernels(const KernelsResult& result, OutputFormat format);

}  // namespace jaxprof
