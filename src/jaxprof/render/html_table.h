// A sortable HTML table for the report: cells carry display text and, for numbers, the exact value
// the page's script sorts by (so "1.95 ms" sorts after "812 ns"). All text is escaped here.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace jaxprof {

struct HtmlCell {
  std::string text;
  std::optional<double> value;  // numeric sort key; text cells sort by text
};

struct HtmlTable {
  std::string id;
  std::vector<std::string> headers;
  std::vector<bool> numeric;  // per column: right-aligned, sorted by value
  std::vector<std::vector<HtmlCell>> rows;

  void add_column(std::string header, bool is_numeric) {
    headers.push_back(std::move(header));
    numeric.push_back(is_numeric);
  }
  std::string render() const;
};

HtmlCell text_cell(std::string text);
HtmlCell duration_cell(double ps);
HtmlCell count_cell(double n);
HtmlCell percent_cell(double fraction);
HtmlCell number_cell(double v, const char* unit = "");
// Sizes and bandwidths as everywhere else (render/units.h); unknown reads "—".
HtmlCell bytes_cell(std::optional<double> bytes);
HtmlCell bandwidth_cell(std::optional<double> gbps);

}  // namespace jaxprof
