// The report's "Critical path" section (docs/critical-path.md): each step's critical time by
// category as a bar, the median steady step's ops with most time on the path and their slack,
// and, when collectives span several hosts, which host (and what work on it) each collective
// waited for: its last participant to arrive.
#pragma once

#include <string>

#include "jaxprof/analysis/critical_path/critical_path.h"
#include "jaxprof/render/html/html_page.h"

namespace jaxprof {

std::string html_critical_path_body(HtmlPageParts& parts, const CriticalPathResult& r, size_t top);

}  // namespace jaxprof
