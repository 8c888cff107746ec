// `jaxprof report`: one self-contained HTML file (inline CSS, inline SVG charts, inline script; no
// network, fonts or images) with the summary and observations, the per-device time breakdown,
// the step-time plot, sortable and filterable module / op / source-line / collective / kernel
// tables with drill-down links between them, both interactive flamegraphs and compile phases. Every profile name is escaped; data for the page's script sits in a
// <script type="application/json"> block with <, >, & and U+2028/2029 escaped.
#pragma once

#include <string>
#include <string_view>

#include "jaxprof/analysis/steps/steady_state.h"
#include "jaxprof/model/profile.h"
#include "jaxprof/render/html/html_page.h"

namespace jaxprof {

struct HtmlReportOptions {
  std::string title = "jaxprof report";
  std::string source;  // the profile path, shown in the header
  size_t top = 50;     // rows per table
  SteadyStateOptions steady;
};

std::string render_html_report(const Profile& profile, const HtmlReportOptions& options = {});

struct HtmlReportData;
// The page of figures computed beforehand (html_report_data.h).
std::string render_html_report(const HtmlReportData& data, const HtmlReportOptions& options);

}  // namespace jaxprof
