// jaxprof sql through DuckDB's C API (src/jaxprof/sql/), in this process: the profile read, the
// tables the query names built and scanned in place, the rows written as the Python package writes
// them. Where that cannot be done (no DuckDB library found, Parquet output, a result type only
// the Python package renders), the command hands over to Python (cmd_sql.cc).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace jaxprof::cli {

struct SqlRequest {
  std::vector<std::string> paths;
  std::string query, format, output;
};

// The exit code, or nullopt with `why_not` when the Python package must run the query. A bad
// query is exit 2 with DuckDB's message; a bad profile throws InputError as every command does.
std::optional<int> run_sql_natively(const SqlRequest& request, std::string& why_not);

}  // namespace jaxprof::cli
