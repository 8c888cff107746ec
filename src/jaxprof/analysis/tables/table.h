// A table of the profile as typed columns, one value per row: what the table builders
// (tables.h) return and the bindings hand to Arrow without a Python object per row. Strings are
// dictionary-encoded (an int32 code per row into the column's dictionary); nulls are an Arrow
// validity bitmap (bit set = present), kept only once a column holds a null.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace jaxprof {

enum class TableType : uint8_t { kInt64, kUInt64, kDouble, kBool, kString };
const char* table_type_name(TableType t);  // int64, uint64, double, bool, string

struct RecordColumn {
  std::string name;
  TableType type = TableType::kInt64;
  std::string unit;     // "ps", "bytes", "flops" or ""
  std::string meaning;  // one line for `jaxprof tables` and docs/tables.md
  // One of these holds the values, by type: int64 for kInt64, uint64 for kUInt64, double for
  // kDouble, uint8 (0/1) for kBool, int32 codes into `dictionary` for kString.
  std::vector<int64_t> i64;
  std::vector<uint64_t> u64;
  std::vector<double> f64;
  std::vector<uint8_t> b;
  std::vector<int32_t> codes;
  std::vector<std::string> dictionary;
  std::vector<uint8_t> validity;  // packed, LSB first; empty while no row is null
  uint64_t null_count = 0;

  size_t size() const;
  void reserve(size_t n);
  void push(int64_t v) { i64.push_back(v); }
  void push_u(uint64_t v) { u64.push_back(v); }
  void push_f(double v) { f64.push_back(v); }
  void push_b(bool v) { b.push_back(v ? 1 : 0); }
  void push_code(int32_t code) { codes.push_back(code); }
  // A null of the column's type: a zero value with its validity bit cleared.
  void push_null();
  // `count` nulls at once (a column a source never fills: cheaper than a push_null per row).
  void push_nulls(size_t count);
  bool is_null(size_t row) const {
    return !validity.empty() && !(validity[row >> 3] >> (row & 7) & 1);
  }

 private:
  void clear_last_valid();
};

// Interns the strings of one column into its dictionary: codes in first-seen order.
class StringCodes {
 public:
  explicit StringCodes(RecordColumn& column) : column_(column) {}
  int32_t code(std::string_view s);
  // The string as a row: pushed as a null when `present` is false.
  void push(std::string_view s, bool present = true);

 private:
  RecordColumn& column_;
  std::unordered_map<std::string, int32_t> index_;
};

struct RecordTable {
  std::string name;
  uint64_t rows = 0;
  std::deque<RecordColumn> columns;  // a deque: add() hands out references that must stay valid

  // Declares a column (in order); returns it for filling.
  RecordColumn& add(std::string name, TableType type, std::string unit, std::string meaning);
  RecordColumn& column(std::string_view name);
  // Checks every column holds `rows` values (a builder's slip would misalign Arrow's buffers).
  void finish();
};

}  // namespace jaxprof
