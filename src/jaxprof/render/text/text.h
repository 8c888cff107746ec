// Writers for the three output formats every command offers: aligned tables for people, JSON and
// CSV for scripts. They escape what they print (names come from untrusted profiles).
#pragma once

#include <concepts>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "jaxprof/common/escape.h"
#include "jaxprof/common/units.h"

namespace jaxprof {

enum class OutputFormat { kTable, kJson, kCsv };
bool parse_output_format(std::string_view text, OutputFormat& out);

// Calls the writer for `format`: every renderer has one per format.
template <typename Result, typename Json, typename Csv, typename TableWriter>
std::string render_in(OutputFormat format, const Result& result, Json json, Csv csv,
                      TableWriter table) {
  switch (format) {
    case OutputFormat::kJson:
      return json(result);
    case OutputFormat::kCsv:
      return csv(result);
    case OutputFormat::kTable:
      return table(result);
  }
  return {};
}

// How tables are laid out in this process: set once by the CLI (--wide, the terminal's width)
// before anything renders.
struct TableLayout {
  bool wide = false;      // never cut a cell (--wide)
  size_t line_width = 0;  // cut the widest text columns until lines fit (0 = no limit)
  bool python = false;    // hints name the Python package's spellings, not the CLI's
};
void set_table_layout(const TableLayout& layout);
TableLayout table_layout();

// A column: its header and what its cells measure. Measured columns print every cell in one
// unit chosen from the column's values (common/units.h), named in the header: "total (ms)".
struct TableColumn {
  std::string header;
  Measure measure = Measure::kText;
  bool plus = false;  // positive numbers read "+1.200" (changes)
};

// A cell: text, or a number its column formats (std::nullopt: unknown, printed "—").
struct Cell {
  std::string text;
  std::optional<double> value;
  bool is_number = false;
  std::string suffix;  // printed after the number ("(12.3%)")

  Cell(std::string t) : text(std::move(t)) {}    // NOLINT: text converts implicitly
  Cell(const char* t) : text(t) {}               // NOLINT
  Cell(std::string_view t) : text(t) {}          // NOLINT
  Cell(double v) : value(v), is_number(true) {}  // NOLINT
  template <std::integral I>
  Cell(I v) : value(static_cast<double>(v)), is_number(true) {}  // NOLINT
  Cell(std::optional<double> v) : value(v), is_number(true) {}   // NOLINT
  static Cell unknown() { return Cell(std::optional<double>()); }
  // An identifier (a program id, a fingerprint) as its digits: a double keeps only 53 bits, so
  // 9646411105960254074 would print as 9646411105960253440.
  static Cell id(uint64_t v) { return Cell(std::to_string(v)); }
  Cell&& then(std::string_view text) && {
    suffix.reserve(text.size() + 1);
    suffix.push_back(' ');
    suffix.append(text);
    return std::move(*this);
  }
};

// Columns of cells. Text cells longer than `max_width` are cut, keeping what tells them apart
// from the other cells of their column; with table_layout().line_width the widest text columns
// are cut further until lines fit.
class Table {
 public:
  explicit Table(std::vector<TableColumn> columns);
  // Columns of text, right-aligned where `numeric[i]`.
  explicit Table(std::vector<std::string> header, std::vector<bool> numeric = {});
  void add(std::vector<Cell> row);
  // Rows of text (a braced list of strings picks the Cell overload: both print the same).
  template <typename S>
  requires std::same_as<S, std::string>
  void add(std::vector<S> row) {
    add(std::vector<Cell>(std::make_move_iterator(row.begin()),
                          std::make_move_iterator(row.end())));
  }
  std::string render(size_t max_width = 80) const;
  size_t rows() const { return rows_.size(); }

 private:
  std::vector<TableColumn> columns_;
  std::vector<std::vector<Cell>> rows_;
};

// Display width of UTF-8 text (code points; good enough for names).
size_t text_width(std::string_view s);
// `s` cut to `width` code points with "…", keeping its first `distinct_from` code points'
// neighbourhood when that is where it differs from similar names (see Table).
std::string cut_text(std::string_view s, size_t width, size_t differs_at = 0, size_t same_tail = 0);

// The line under a table cut by --top: "20 of 2729 kernels shown; --top 0 shows all, ...".
// Without `how_to_see_all`: how to see every row of a command's output (--top 0, JSON, CSV on the
// CLI; the result's rows in Python).
std::string more_rows_line(size_t shown, size_t total, std::string_view what,
                           std::string_view how_to_see_all = {});

}  // namespace jaxprof
