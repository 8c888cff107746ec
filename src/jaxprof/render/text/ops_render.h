#pragma once

#include <string>

#include "jaxprof/analysis/ops/ops.h"
#include "jaxprof/render/text/text.h"

namespace jaxprof {

std::string render_ops(const OpsResult& result, OutputFormat format);

}  // namespace jaxprof
