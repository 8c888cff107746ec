// `jaxprof diff --format html`: the diff as one self-contained page in the frame of the report
// (html_page.h): a summary with the total change and how much of it the top op differences
// explain, bars of the largest op contributions, and sortable tables of modules, ops, added and
// removed ops, and categories with deltas, ratios, p-values and how ops were matched.
#pragma once

#include <string>
#include <vector>

#include "jaxprof/analysis/stats/diff.h"

namespace jaxprof {

struct HtmlDiffOptions {
  std::string title = "jaxprof diff";
  std::vector<std::string> base, now;  // the profiles of each side, shown in the summary
  size_t rows = 0;                     // op rows in the ops table (0 = all)
  size_t bars = 20;                    // largest op contributions drawn
};

std::string render_html_diff(const DiffResult& result, const HtmlDiffOptions& options = {});

}  // namespace jaxprof
