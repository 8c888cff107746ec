// A table (table.h) exported through the Arrow C data and stream interfaces
// (arrow_c_interface.h): the consumer reads the columns' own buffers, so DuckDB scans a table
// without pyarrow and without a copy. Strings are dictionary<int32, utf8>; every column is
// nullable and carries its unit and meaning as field metadata, as the pyarrow tables do.
#pragma once

#include <memory>

#include "jaxprof/analysis/tables/arrow_c_interface.h"
#include "jaxprof/analysis/tables/table.h"

namespace jaxprof {

// A table ready for export: the table, and the buffers Arrow's layout needs beside its columns
// (booleans as bits, each dictionary as offsets and bytes), made once for every export.
class ArrowExport {
 public:
  explicit ArrowExport(RecordTable table);
  ArrowExport(const ArrowExport&) = delete;
  ArrowExport& operator=(const ArrowExport&) = delete;
  ~ArrowExport();

  const RecordTable& table() const { return table_; }
  // Fills `out` (owned by the caller until its release is called) with the table's schema: a
  // struct with one child per column.
  void export_schema(ArrowSchema* out) const;
  // Fills `out` with a stream of one batch holding every row. The stream and the arrays it hands
  // out keep `self` alive, so they may outlive every other reference to it.
  static void export_stream(const std::shared_ptr<const ArrowExport>& self, ArrowArrayStream* out);
  // Fills `out` with the stream's one batch: a struct array of every row, holding `self`.
  static void export_stream_batch(const std::shared_ptr<const ArrowExport>& self, ArrowArray* out);

  struct ColumnBuffers;  // defined in table_arrow.cc

 private:
  RecordTable table_;
  std::unique_ptr<ColumnBuffers[]> buffers_;
};

}  // namespace jaxprof
