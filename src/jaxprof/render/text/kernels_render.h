#pragma once

#include <string>

#include "jaxprof/analysis/ops/kernels.h"
#include "jaxprof/render/text/text.h"

namespace jaxprof {

std::string render_kernels(const KernelsResult& result, OutputFormat format);

}  // namespace jaxprof
