#pragma once

#include <string>

#include "jaxprof/analysis/summary/summary.h"
#include "jaxprof/render/text/text.h"

namespace jaxprof {

std::string render_summary(const SummaryResult& result, OutputFormat format);

}  // namespace jaxprof
