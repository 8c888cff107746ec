// The roofline chart of one device as a self-contained SVG: arithmetic intensity (FLOPs per byte)
// against achieved FLOP/s on log-log axes, the memory slope and the compute ceilings of the peaks
// the ops are held to, and one point per op, its area proportional to its time and its colour its
// category. For the HTML report, Jupyter and `jaxprof roofline --svg`.
#pragma once

#include <string>
#include <vector>

#include "jaxprof/analysis/cost/roofline.h"

namespace jaxprof {

std::string roofline_svg(const RooflineDevice& device);
// Several devices' charts, one under another, in one SVG document.
std::string roofline_svg_stack(const std::vector<RooflineDevice>& devices);

}  // namespace jaxprof
