// A scatter plot for the HTML report whose scales come from the data: each axis spans the points
// (with a margin), log when the values span more than a factor of 30 (always for sizes, which
// grow in powers of two), linear from zero otherwise. Points are coloured by group, with a legend.
#pragma once

#include <string>
#include <vector>

#include "jaxprof/render/html/chart_axis.h"

namespace jaxprof {

struct ScatterPoint {
  double x = 0, y = 0;  // base units of the axes' quantities; points <= 0 are left out
  std::string group;    // colour and legend entry ("all-reduce")
  std::string label;    // tooltip
};

struct ScatterAxisSpec {
  std::string title;  // "message size"
  AxisQuantity quantity = AxisQuantity::kCount;
};

std::string svg_scatter(const std::vector<ScatterPoint>& points, const ScatterAxisSpec& x,
                        const ScatterAxisSpec& y);

}  // namespace jaxprof
