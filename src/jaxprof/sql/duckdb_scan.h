// The table function through which DuckDB reads the profile's tables (duckdb_session.h): each
// table a view of its name over jaxprof_table('name'), which hands DuckDB a vector (2048 rows) at
// a time of only the columns the query reads, in the table's order, on one thread. Numbers and
// booleans are copied from the table's columns; a string column is its dictionary, made into a
// DuckDB vector once, sliced by the rows' codes (a dictionary vector: no string is copied).
#pragma once

#include <memory>
#include <string>

#include "jaxprof/analysis/tables/table.h"
#include "jaxprof/sql/duckdb_api.h"

namespace jaxprof {

class DuckDbTables {
 public:
  explicit DuckDbTables(const duckdb_c::Api& api);
  ~DuckDbTables();
  DuckDbTables(const DuckDbTables&) = delete;
  DuckDbTables& operator=(const DuckDbTables&) = delete;

  // Registers the table function on the connection (once, before add()).
  bool register_function(duckdb_c::connection con, std::string& why_not);
  // Holds the table for the function to scan; returns the statement that creates its view.
  std::string add(std::shared_ptr<const RecordTable> table);

  struct Registry;  // duckdb_scan.cc

 private:
  std::unique_ptr<Registry> registry_;
};

}  // namespace jaxprof
