#pragma once

#include <string>

#include "jaxprof/analysis/cost/roofline.h"
#include "jaxprof/render/text/text.h"

namespace jaxprof {

// `top`: the table lists each device's N longest ops (0 = all), saying how many there are.
std::string render_roofline(const RooflineResult& result, OutputFormat format, size_t top = 0);

}  // namespace jaxprof
