#pragma once

#include <string>

#include "jaxprof/analysis/roofline.h"
#include "jaxprof/render/text.h"

namespace jaxprof {

std::string render_roofline(const RooflineResult& result, OutputFormat format);

// A count with an SI prefix for tables: 1.37e12 -> "1.37 T".
std::string si_count(double v);

}  // namespace jaxprof
