#include "jaxprof/render/text/text.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <numeric>

namespace jaxprof {

bool parse_output_format(std::string_view text, OutputFormat& out) {
  if (text == "table")
    out = OutputFormat::kTable;
  else if (text == "json")
    out = OutputFormat::kJson;
  else if (text == "csv")
    out = OutputFormat::kCsv;
  else
    return false;
  return true;
}

namespace {

std::atomic<bool> g_wide{false};
std::atomic<size_t> g_line_width{0};
std::atomic<bool> g_python{false};

// Byte offset of each code point of `s`, and s.size() at the end.
std::vector<size_t> code_points(std::string_view s) {
  std::vector<size_t> at;
  at.reserve(s.size() + 1);
  for (size_t i = 0; i < s.size(); ++i)
    if ((static_cast<unsigned char>(s[i]) & 0xc0) != 0x80) at.push_back(i);
  at.push_back(s.size());
  return at;
}

// Code points in the first `bytes` bytes of `s`.
size_t code_points_in(std::string_view s, size_t bytes) { return text_width(s.substr(0, bytes)); }

size_t common_prefix(std::string_view a, std::string_view b) {
  size_t n = std::min(a.size(), b.size()), i = 0;
  while (i < n && a[i] == b[i]) ++i;
  return i;
}

size_t common_suffix(std::string_view a, std::string_view b) {
  size_t n = std::min(a.size(), b.size()), i = 0;
  while (i < n && a[a.size() - 1 - i] == b[b.size() - 1 - i]) ++i;
  return i;
}

// For each cell of a text column: how far it agrees with the most similar other cell from the
// start and from the end (in code points). Neighbours in sorted order are the most similar.
void agreement(const std::vector<std::string>& cells, std::vector<size_t>& prefix,
               std::vector<size_t>& suffix) {
  size_t n = cells.size();
  prefix.assign(n, 0);
  suffix.assign(n, 0);
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return cells[a] < cells[b]; });
  for (size_t k = 1; k < n; ++k) {
    size_t a = order[k - 1], b = order[k];
    if (cells[a] == cells[b]) continue;  // identical cells cannot be told apart by cutting
    size_t c = common_prefix(cells[a], cells[b]);
    prefix[a] = std::max(prefix[a], c);
    prefix[b] = std::max(prefix[b], c);
  }
  auto reversed_less = [&](size_t a, size_t b) {
    return std::lexicographical_compare(cells[a].rbegin(), cells[a].rend(), cells[b].rbegin(),
                                        cells[b].rend());
  };
  std::sort(order.begin(), order.end(), reversed_less);
  for (size_t k = 1; k < n; ++k) {
    size_t a = order[k - 1], b = order[k];
    if (cells[a] == cells[b]) continue;
    size_t c = common_suffix(cells[a], cells[b]);
    suffix[a] = std::max(suffix[a], c);
    suffix[b] = std::max(suffix[b], c);
  }
  for (size_t i = 0; i < n; ++i) {
    prefix[i] = code_points_in(cells[i], prefix[i]);
    suffix[i] = text_width(std::string_view(cells[i]).substr(cells[i].size() - suffix[i]));
  }
}

}  // namespace

void set_table_layout(const TableLayout& layout) {
  g_wide = layout.wide;
  g_line_width = layout.line_width;
  g_python = layout.python;
}

TableLayout table_layout() { return {g_wide.load(), g_line_width.load(), g_python.load()}; }

size_t text_width(std::string_view s) {
  size_t w = 0;
  for (unsigned char c : s) w += (c & 0xc0) != 0x80;
  return w;
}

std::string cut_text(std::string_view s, size_t width, size_t differs_at, size_t same_tail) {
  std::vector<size_t> at = code_points(s);
  size_t n = at.size() - 1;
  if (n <= width) return std::string(s);
  const std::string_view ellipsis = "\xe2\x80\xa6";  // …
  auto part = [&](size_t from, size_t to) { return s.substr(at[from], at[to] - at[from]); };
  if (width < 2) return width ? std::string(ellipsis) : std::string();
  size_t keep = width - 1;
  size_t head = (keep + 1) / 2, tail = keep - head;
  // The head or the tail already shows where this name differs from its neighbours: keep both
  // ends (kernel names differ at both ends more often than not).
  bool ends_differ = (differs_at == 0 && same_tail == 0) || differs_at < head || same_tail < tail;
  if (ends_differ || width < 12)
    return std::string(part(0, head)) + std::string(ellipsis) + std::string(part(n - tail, n));
  // The difference sits in the middle: the start, the part that differs, and the end.
  size_t room = width - 2;
  size_t h = room / 4, t = room / 4, mid = room - h - t;
  size_t start = std::max(h, differs_at > 3 ? differs_at - 3 : size_t{0});
  if (start + mid >= n - t) {
    size_t rest = width - 1 - h;
    return std::string(part(0, h)) + std::string(ellipsis) + std::string(part(n - rest, n));
  }
  return std::string(part(0, h)) + std::string(ellipsis) + std::string(part(start, start + mid)) +
         std::string(ellipsis) + std::string(part(n - t, n));
}

std::string more_rows_line(size_t shown, size_t total, std::string_view what,
                           std::string_view how_to_see_all) {
  if (how_to_see_all.empty())
    how_to_see_all = table_layout().python
                         ? "top=0 shows all; .rows, .data and .to_pandas() hold them"
                         : "--top 0 shows all, --format json|csv lists all";
  return fmt::format("{} of {} {} shown; {}\n", shown, total, what, how_to_see_all);
}

Table::Table(std::vector<TableColumn> columns) : columns_(std::move(columns)) {}

Table::Table(std::vector<std::string> header, std::vector<bool> numeric) {
  numeric.resize(header.size(), false);
  for (size_t i = 0; i < header.size(); ++i)
    columns_.push_back({std::move(header[i]), numeric[i] ? Measure::kLabel : Measure::kText});
}

void Table::add(std::vector<Cell> row) {
  row.resize(columns_.size(), Cell(""));
  rows_.push_back(std::move(row));
}

std::string Table::render(size_t max_width) const {
  const TableLayout layout = table_layout();
  const size_t n = columns_.size();
  // Fitting to the terminal never cuts a column below these widths.
  constexpr size_t kMinTextWidth = 16, kMinNameWidth = 32;
  std::vector<std::string> header(n);
  std::vector<std::vector<std::string>> cells(rows_.size(), std::vector<std::string>(n));
  std::vector<size_t> cap(n, SIZE_MAX), width(n, 0);
  std::vector<std::vector<size_t>> prefix(n), suffix(n);
  for (size_t c = 0; c < n; ++c) {
    const TableColumn& col = columns_[c];
    std::vector<double> values;
    for (const auto& r : rows_)
      if (r[c].is_number && r[c].value) values.push_back(*r[c].value);
    Measure m = col.measure == Measure::kText || col.measure == Measure::kLabel ? Measure::kNumber
                                                                                : col.measure;
    UnitScale scale = column_scale(m, values);
    header[c] = col.header;
    // A column of zeros and unknowns has no unit to name.
    bool any = std::any_of(values.begin(), values.end(),
                           [](double v) { return v != 0 && std::isfinite(v); });
    if (any && !scale.unit.empty() && col.measure != Measure::kText &&
        col.measure != Measure::kLabel)
      header[c] += " (" + std::string(scale.unit) + ")";
    for (size_t r = 0; r < rows_.size(); ++r) {
      const Cell& cell = rows_[r][c];
      if (!cell.is_number) {
        cells[r][c] = cell.text;
        continue;
      }
      bool plus = col.plus && cell.value && *cell.value > 0;
      cells[r][c] =
          fmt::format("{}{}{}", plus ? "+" : "", format_in(cell.value, scale, false), cell.suffix);
    }
    width[c] = text_width(header[c]);
    size_t longest = 0;
    for (const auto& row : cells) longest = std::max(longest, text_width(row[c]));
    if (col.measure == Measure::kText && !layout.wide) {
      cap[c] = std::max(max_width, width[c]);
      std::vector<std::string> column;
      for (const auto& row : cells) column.push_back(row[c]);
      if (longest > cap[c]) agreement(column, prefix[c], suffix[c]);
    }
    width[c] = std::max(width[c], std::min(longest, cap[c]));
  }
  // Fit the terminal: narrow the widest text column, one character at a time.
  if (layout.line_width > 0 && !layout.wide) {
    auto total = [&] {
      size_t t = n ? 2 * (n - 1) : 0;
      for (size_t w : width) t += w;
      return t;
    };
    // The first column names the row: the other text columns (paths, sources) give way first.
    auto floor_of = [&](size_t c) {
      return std::max(c == 0 ? kMinNameWidth : kMinTextWidth, text_width(header[c]));
    };
    while (total() > layout.line_width) {
      size_t widest = n;
      for (int pass = 0; pass < 2 && widest == n; ++pass)
        for (size_t c = pass == 0 ? 1 : 0; c < (pass == 0 ? n : 1); ++c)
          if (columns_[c].measure == Measure::kText && width[c] > floor_of(c) &&
              (widest == n || width[c] > width[widest]))
            widest = c;
      if (widest == n) break;
      cap[widest] = --width[widest];
      if (prefix[widest].empty()) {
        std::vector<std::string> column;
        for (const auto& row : cells) column.push_back(row[widest]);
        agreement(column, prefix[widest], suffix[widest]);
      }
    }
  }
  std::string out;
  auto emit = [&](const std::vector<std::string>& row, bool is_header) {
    std::string line;
    for (size_t c = 0; c < n; ++c) {
      bool right = columns_[c].measure != Measure::kText;
      std::string text = row[c];
      if (!is_header && cap[c] != SIZE_MAX && text_width(text) > cap[c]) {
        size_t r = static_cast<size_t>(&row - &cells[0]);
        text = cut_text(text, cap[c], prefix[c].empty() ? 0 : prefix[c][r],
                        suffix[c].empty() ? 0 : suffix[c][r]);
      }
      size_t w = text_width(text);
      std::string pad(width[c] > w ? width[c] - w : 0, ' ');
      if (c) line += "  ";
      line += right ? pad + text : text + (c + 1 < n ? pad : "");
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  };
  emit(header, true);
  std::string rule;
  for (size_t c = 0; c < n; ++c) {
    if (c) rule += "  ";
    rule += std::string(width[c], '-');
  }
  out += rule + "\n";
  for (const auto& row : cells) emit(row, false);
  return out;
}

}  // namespace jaxprof
