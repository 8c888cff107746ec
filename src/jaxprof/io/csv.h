// A small reader for the comma-separated tables Nsight Systems' `nsys stats` writes (RFC 4180:
// quoted fields may hold commas, doubled quotes and newlines). Fields are views into the input
// unless they had doubled quotes, which are unescaped into storage the table keeps.
#pragma once

#include <deque>
#include <string>
#include <string_view>
#include <vector>

namespace jaxprof {

class CsvTable {
 public:
  // Parses `text` (which must outlive the table). `name` is used in error messages. Throws
  // InputError for an unterminated quote or a row with a different number of fields.
  CsvTable(std::string_view text, std::string name);

  const std::vector<std::string_view>& header() const { return header_; }
  size_t rows() const { return rows_; }
  // Column index by header name, -1 when absent.
  int find(std::string_view column) const;
  std::string_view at(size_t row, size_t column) const { return cells_[row * width_ + column]; }

 private:
  std::vector<std::string_view> header_;
  std::vector<std::string_view> cells_;
  std::deque<std::string> unescaped_;  // deque: views into it stay valid as it grows
  size_t width_ = 0, rows_ = 0;
};

}  // namespace jaxprof
