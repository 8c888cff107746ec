// Writers for the three output formats every command offers: aligned tables for people, JSON and
// CSV for scripts. They escape what they print (names come from untrusted profiles).
#pragma once

#include <string>
#include <string_view>
#include <vector>

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

std::string json_string(std::string_view s);  // quoted and escaped
std::string csv_field(std::string_view s);    // quoted when needed

// Columns of strings, right-aligned where `numeric[i]`; long cells are cut to `max_width`.
class Table {
 public:
  explicit Table(std::vector<std::string> header, std::vector<bool> numeric = {});
  void add(std::vector<std::string> row);
  std::string render(size_t max_width = 80) const;
  size_t rows() const { return rows_.size(); }

 private:
  std::vector<std::string> header_;
  std::vector<bool> numeric_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace jaxprof
