// The report's ops and source-lines tables, built for drilling down within the page: a module
// (in the modules table) narrows both to its rows, an op's source line narrows the source-lines
// table to it, a source line narrows the ops table to the ops it holds. Each table holds the top
// rows over all modules and, hidden until a reader filters or drills, the top rows of every module
// the modules table lists, so that drilling into any of them finds its ops.
#pragma once

#include <string>
#include <vector>

#include "jaxprof/analysis/summary/summary.h"
#include "jaxprof/render/html/html_page.h"

namespace jaxprof {

// Table ids, for drill-down links from other sections.
inline constexpr const char* kOpsTable = "ops-table";
inline constexpr const char* kSourcesTable = "sources-table";

// `ops`: every op over all devices, by self time descending (compute_summary with no top);
// `modules`: the names the modules table lists.
std::string html_ops_body(HtmlPageParts& parts, const std::vector<SummaryOp>& ops,
                          const std::vector<std::string>& modules, size_t top);
std::string html_sources_body(HtmlPageParts& parts, const std::vector<SummaryOp>& ops,
                              const std::vector<std::string>& modules, size_t top);

// A module's name linked to its ops and source lines (both tables narrowed to it); "—" when the
// module is unknown.
HtmlCell module_cell(const std::string& module);

}  // namespace jaxprof
