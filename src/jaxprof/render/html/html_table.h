// A sortable HTML table for the report: cells carry display text and, for numbers, the exact value
// the page's script sorts by (so "1.95 ms" sorts after "812 ns"); rows carry the keys the script
// filters on when a reader drills from one table into another. All text is escaped here.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace jaxprof {

// A drill-down link: clicking the cell narrows the `targets` tables (ids, space-separated) to the
// rows whose data-KEY attributes equal `scope`'s values (see HtmlTable::row_data) and scrolls to
// the first of them. With `detail` instead, the click opens a row under this one with every
// column's whole text.
struct HtmlDrill {
  std::string targets;
  std::vector<std::pair<std::string, std::string>> scope;  // key -> value
  bool detail = false;
  bool empty() const { return targets.empty() && !detail; }
};

struct HtmlCell {
  std::string text;
  std::optional<double> value;  // numeric sort key; text cells sort by text
  // Layout of a text cell: "" wraps at spaces; "name" never wraps, a very long name cut with an
  // ellipsis; "long" stays on one line cut with an ellipsis at a narrower width (the whole text
  // in `title`).
  std::string layout;
  std::string title;  // shown on hover: the whole text when `text` is a short form
  HtmlDrill drill;    // when set, the cell is a button the page's script follows
};

struct HtmlTable {
  std::string id;
  std::vector<std::string> headers;
  std::vector<bool> numeric;  // per column: right-aligned, sorted by value
  std::vector<std::vector<HtmlCell>> rows;
  // Per row (may be shorter than rows): data-* attributes the page's script filters on, e.g.
  // {"module", "jit_step"}; an "extra" key hides the row until the reader filters or drills.
  std::vector<std::vector<std::pair<std::string, std::string>>> row_data;
  bool filterable = false;  // a filter box above it, and a note when drilling narrows it

  void add_column(std::string header, bool is_numeric) {
    headers.push_back(std::move(header));
    numeric.push_back(is_numeric);
  }
  std::string render() const;
};

HtmlCell text_cell(std::string text);
// One line, never wrapped: names of ops, modules, kernels (cut when longer than the column).
HtmlCell name_cell(std::string text, HtmlDrill drill = {});
// `shown` in one line cut with an ellipsis, `whole` on hover and in the detail row.
HtmlCell long_cell(std::string shown, std::string whole, HtmlDrill drill = {});
HtmlCell duration_cell(double ps);
HtmlCell count_cell(double n);
HtmlCell percent_cell(double fraction);
HtmlCell number_cell(double v, const char* unit = "");
// Sizes and bandwidths as everywhere else (common/units.h); unknown reads "—".
HtmlCell bytes_cell(std::optional<double> bytes);
HtmlCell bandwidth_cell(std::optional<double> gbps);

}  // namespace jaxprof
