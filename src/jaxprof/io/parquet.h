// A small Parquet reader for the flat tables Nsight Systems and nsys-jax write (there is no Arrow
// C++ package in Debian). Reads the footer, then whole columns on request: uncompressed, Snappy
// and gzip pages; data pages v1 and v2; PLAIN, dictionary (PLAIN_DICTIONARY / RLE_DICTIONARY) and
// RLE / bit-packed hybrid encodings; definition levels (nulls) and repetition levels (lists).
// Strings are views into the file or into decompressed pages the ParquetColumn keeps.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace jaxprof {

enum class ParquetType : uint8_t {
  kBoolean = 0,
  kInt32 = 1,
  kInt64 = 2,
  kInt96 = 3,
  kFloat = 4,
  kDouble = 5,
  kByteArray = 6,
  kFixedLenByteArray = 7,
};

struct ParquetColumnInfo {
  std::string path;  // leaf path, elements joined by '.'
  std::string name;  // the top-level field it belongs to
  ParquetType type = ParquetType::kInt64;
  int32_t type_length = 0;  // FIXED_LEN_BYTE_ARRAY
  int16_t max_definition = 0;
  int16_t max_repetition = 0;
};

// One column, one slot per leaf value position (a null or empty list still takes a slot).
// Integers, booleans and floats are widened: INT32/INT64/BOOLEAN into `ints`, FLOAT/DOUBLE into
// `doubles`, byte arrays into `strings`.
struct ParquetColumn {
  ParquetType type = ParquetType::kInt64;
  std::vector<int64_t> ints;
  std::vector<double> doubles;
  std::vector<std::string_view> strings;
  std::vector<uint8_t> valid;       // 1 where the value is present (definition level is max)
  std::vector<int16_t> definition;  // only when the column has nested optional levels or lists
  std::vector<int16_t> repetition;  // only for repeated columns: 0 starts a new row
  std::vector<std::unique_ptr<std::vector<uint8_t>>> pages;  // owns decompressed bytes

  size_t size() const { return valid.size(); }
  bool is_null(size_t i) const { return !valid[i]; }
  // For a list column (max_repetition 1): the [begin, end) slots of each row.
  std::vector<std::pair<uint32_t, uint32_t>> rows() const;
};

struct ParquetLimits {
  // Values per column; a hostile file can declare billions of nulls in a few bytes.
  uint64_t max_values = uint64_t{1} << 27;
  // Bytes of one decompressed page.
  uint64_t max_page_bytes = uint64_t{1} << 31;
};

class ParquetFile {
 public:
  // Parses the footer of `bytes` (which must stay alive while the file and its columns are used).
  // `name` is used in error messages. Throws InputError naming it.
  ParquetFile(std::string_view bytes, std::string name, ParquetLimits limits = {});

  int64_t num_rows() const { return num_rows_; }
  const std::vector<ParquetColumnInfo>& columns() const { return columns_; }
  const std::string& name() const { return name_; }
  // Index of the leaf column with this path (or top-level name for a list), -1 when absent.
  int find(std::string_view path) const;
  ParquetColumn read(int column) const;

  struct Chunk {
    int64_t num_values = 0;
    int32_t codec = 0;
    int64_t data_offset = 0;
    int64_t dictionary_offset = -1;
    int64_t total_compressed = 0;
  };

 private:
  void read_chunk(const ParquetColumnInfo& info, const Chunk& chunk, ParquetColumn& out) const;
  std::string_view bytes_;
  std::string name_;
  ParquetLimits limits_;
  int64_t num_rows_ = 0;
  std::vector<ParquetColumnInfo> columns_;
  std::vector<std::vector<Chunk>> chunks_;  // per column: one chunk per row group
};

}  // namespace jaxprof
