// SQL over the profile's tables with DuckDB's C API (duckdb_api.h): an in-memory database, each
// table a view over a table function that hands DuckDB the table's columns (analysis/tables/
// table.h) a vector at a time, only those the query reads (strings as dictionary vectors over
// the column's dictionary), and a query's rows as an SqlResult (render/text/sql_render.h) where
// the result has only the column types that renders; the Python package does the rest.
//
// Not through the Arrow C stream export as the Python package does (table_arrow.h): the C API's
// duckdb_arrow_scan pushes the query's projection and filters down to the stream, which a C
// stream cannot apply, so its results would be wrong (columns read at the wrong place, filters
// skipped); DuckDB's Python module scans capsules with a function that pushes nothing down, which
// the C API does not reach.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "jaxprof/analysis/tables/table.h"
#include "jaxprof/render/text/sql_render.h"
#include "jaxprof/sql/duckdb_api.h"
#include "jaxprof/sql/duckdb_scan.h"

namespace jaxprof {

// The tables whose names the query holds as whole words, in any case (as the Python package's
// named_tables): only these are built for it. Bytes past ASCII count as word characters.
std::vector<std::string> tables_named_in(std::string_view query);

class DuckDbSession {
 public:
  // `api` must outlive the session. Throws nothing: open() says whether it worked.
  explicit DuckDbSession(const duckdb_c::Api& api);
  ~DuckDbSession();
  DuckDbSession(const DuckDbSession&) = delete;
  DuckDbSession& operator=(const DuckDbSession&) = delete;

  bool open(std::string& why_not);
  // The table as a view of its name (call after open()).
  bool add_table(std::shared_ptr<const RecordTable> table, std::string& why_not);

  struct Outcome {
    enum Kind { kRows, kError, kUnsupported } kind = kRows;
    SqlResult rows;
    std::string message;  // kError: DuckDB's message; kUnsupported: why the rows are not here
  };
  Outcome run(const std::string& query);

 private:
  const duckdb_c::Api& api_;
  duckdb_c::database db_ = nullptr;
  duckdb_c::connection con_ = nullptr;
  std::unique_ptr<DuckDbTables> tables_;  // made by open(); scanned until the connection closes
};

}  // namespace jaxprof
