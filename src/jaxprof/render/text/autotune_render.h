#pragma once

#include <string>

#include "jaxprof/analysis/autotune/autotune_report.h"
#include "jaxprof/render/text/text.h"

namespace jaxprof {

std::string render_autotune_report(const AutotuneReport& report, OutputFormat format);

}  // namespace jaxprof
