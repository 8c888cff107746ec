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

RooflineHtml roofline_html(const RooflineResult& r, size_t top);

}  // namespace jaxprof
