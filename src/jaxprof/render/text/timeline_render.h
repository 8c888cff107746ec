#pragma once

#include <string>

#include "jaxprof/analysis/timeline/timeline.h"
#include "jaxprof/render/text/text.h"

namespace jaxprof {

std::string render_timeline(const TimelineResult& result, OutputFormat format);

}  // namespace jaxprof
