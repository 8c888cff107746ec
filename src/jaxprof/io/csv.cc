#include "jaxprof/io/csv.h"

#include <algorithm>

#include "jaxprof/common/error.h"
#include "jaxprof/io/huge_pages.h"

namespace jaxprof {

namespace {
// Cells reserved up front at most (a hostile file cannot make a huge reservation out of newlines
// alone: 64 M cells is 1 GiB of views).
constexpr size_t max_reserve = size_t{64} << 20;
}  // namespace

CsvTable::CsvTable(std::string_view text, std::string name) {
  std::vector<std::string_view> row;
  size_t i = 0, n = text.size();
  // Lines bound the rows (quoted newlines only make it an overestimate): the cells are allocated
  // once instead of being copied as they grow.
  size_t lines = static_cast<size_t>(std::count(text.begin(), text.end(), '\n')) + 1;
  auto finish_row = [&] {
    if (header_.empty()) {
      header_ = std::move(row);
      width_ = header_.size();
      if (width_ > 0 && lines <= max_reserve / width_) {
        cells_.reserve(lines * width_);
        advise_huge_pages(cells_.data(), cells_.capacity() * sizeof(std::string_view));
      }
    } else if (row.size() == 1 && row[0].empty()) {
      // A blank line (the trailing newline's empty row) is not data.
    } else {
      if (row.size() != width_)
        throw InputError(name, "row " + std::to_string(rows_ + 2) + " has " +
                                   std::to_string(row.size()) + " fields, the header " +
                                   std::to_string(width_));
      cells_.insert(cells_.end(), row.begin(), row.end());
      ++rows_;
    }
    row.clear();
  };
  while (i < n) {
    std::string_view cell;
    if (text[i] == '"') {
      size_t begin = ++i;
      bool doubled = false;
      for (;; ++i) {
        if (i >= n)
          throw InputError(name, "unterminated quoted field", static_cast<int64_t>(begin));
        if (text[i] != '"') continue;
        if (i + 1 < n && text[i + 1] == '"') {
          doubled = true;
          ++i;
          continue;
        }
        break;
      }
      cell = text.substr(begin, i - begin);
      ++i;  // the closing quote
      if (doubled) {
        std::string& s = unescaped_.emplace_back();
        for (size_t k = 0; k < cell.size(); ++k) {
          s += cell[k];
          if (cell[k] == '"') ++k;
        }
        cell = s;
      }
    } else {
      // A plain loop: find_first_of calls memchr on the delimiter set once per character.
      size_t end = i;
      while (end < n && text[end] != ',' && text[end] != '\n' && text[end] != '\r') ++end;
      cell = text.substr(i, end - i);
      i = end;
    }
    row.push_back(cell);
    if (i < n && text[i] == ',') {
      ++i;
      if (i == n) row.emplace_back();
      continue;
    }
    if (i < n && text[i] == '\r') ++i;
    if (i < n && text[i] == '\n') ++i;
    finish_row();
  }
  if (!row.empty()) finish_row();
  if (header_.empty()) throw InputError(name, "empty table (no header)");
}

int CsvTable::find(std::string_view column) const {
  for (size_t c = 0; c < header_.size(); ++c)
    if (header_[c] == column) return static_cast<int>(c);
  return -1;
}

}  // namespace jaxprof
