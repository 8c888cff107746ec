// The roofline section of the HTML report: each device's chart and its longest ops with their
// FLOPs, bytes, bound and efficiency.
#pragma once

#include <string>

#include "jaxprof/analysis/cost/roofline.h"
#include "jaxprof/render/html/html_table.h"

namespace jaxprof {

// Charts as HTML, then the table (the caller renders it through the page, which counts rows).
struct RooflineHtml {
  std::string charts;
  HtmlTable table;
  bool empty = true;
};

// Devices drawn (one shown at a time, picked from a list), and devices whose ops the table lists
// (`top` rows each); the devices after those are counted only.
inline constexpr size_t kRooflineCharts = 64;
inline constexpr size_t kRooflineTableDevices = 128;

RooflineHtml roofline_html(const RooflineResult& r, size_t top);

// Drops what roofline_html would not show of the device at `position` in the result (the ops
// beyond the table's `top` once it is not drawn, every op once it is not listed either) and its
// programs: what a report of many hosts keeps of each.
void keep_shown(RooflineDevice& d, size_t position, size_t top);

}  // namespace jaxprof
