// jaxprof sql and jaxprof tables: SQL over the profile's tables (docs/tables.md). DuckDB's C++
// library is in no Debian package while its Python wheel installs anywhere with pip. `sql` runs
// DuckDB's C API from that wheel's module in this process where the build found it (or
// JAXPROF_DUCKDB_LIBRARY names one: sql_native.h), and otherwise, for Parquet and for results of
// types only the Python package writes, hands over to it: python3 -m jaxprof.sql (the same code as
// Profile.sql()) with the arguments it was given, with the same output. `tables` always does.
// JAXPROF_SQL_NATIVE=off runs Python always, =require never (exit 2 saying why); with
// JAXPROF_SQL_DEBUG set, stderr says which ran and why.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>

#include "cli_common.h"
#include "python_handoff.h"
#include "sql_native.h"

namespace jaxprof::cli {
namespace {

bool env_is(const char* name, const char* value) {
  const char* v = std::getenv(name);
  return v != nullptr && std::strcmp(v, value) == 0;
}

// The query through DuckDB's C API when it can, else (or with JAXPROF_SQL_NATIVE=off) in Python.
int run_sql(const SqlRequest& request, std::vector<std::string> python_args) {
  const char* debug = std::getenv("JAXPROF_SQL_DEBUG");
  const bool say = debug != nullptr && *debug != '\0' && std::strcmp(debug, "0") != 0;
  std::string why_not = "JAXPROF_SQL_NATIVE=off";
  if (!env_is("JAXPROF_SQL_NATIVE", "off")) {
    if (std::optional<int> code = run_sql_natively(request, why_not)) {
      if (say) std::fprintf(stderr, "jaxprof: sql: ran through DuckDB's C API\n");
      // The database and the profile need no freeing at exit (as the Python path, os._exit).
      std::cout.flush();
      std::fflush(nullptr);
      std::_Exit(*code);
    }
  }
  if (env_is("JAXPROF_SQL_NATIVE", "require")) {
    std::fprintf(stderr, "jaxprof: sql: DuckDB's C API not used: %s\n", why_not.c_str());
    return kExitBadInput;
  }
  if (say) std::fprintf(stderr, "jaxprof: sql: running Python: %s\n", why_not.c_str());
  return exec_python("jaxprof.sql", std::move(python_args));
}

RegisterCommand sql_command(99, [](CLI::App& app) -> std::function<int()> {
  struct Options {
    std::vector<std::string> args;
    std::string format = "table", output;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = app.add_subcommand("sql", "SQL (DuckDB) over the profile's tables");
  cmd->footer(
      "Tables and recipes: docs/tables.md. Runs DuckDB's C API from the duckdb wheel the build "
      "found (JAXPROF_DUCKDB_LIBRARY: that module or a libduckdb.so; JAXPROF_DUCKDB_LIBPYTHON), "
      "else, and for Parquet and results of other types, python3 -m jaxprof.sql (pip install "
      "'jaxprof[sql]'; JAXPROF_PYTHON picks the interpreter). JAXPROF_SQL_NATIVE=off|require, "
      "JAXPROF_SQL_DEBUG=1: see docs/tables.md. A bad query: DuckDB's message, exit 2.");
  cmd->add_option("args", o->args, "PATH... QUERY: the profile, then the query")
      ->required()
      ->expected(2, -1);
  cmd->add_option("--format", o->format, "Output format (json: an array of objects)")
      ->check(CLI::IsMember({"table", "csv", "json", "parquet"}))
      ->capture_default_str();
  cmd->add_option("-o,--output", o->output, "Write to FILE (parquet needs it)");
  return [o]() {
    std::vector<std::string> args = {"sql"};
    args.insert(args.end(), o->args.begin(), o->args.end());
    args.insert(args.end(), {"--format", o->format});
    if (!o->output.empty()) args.insert(args.end(), {"--output", o->output});
    SqlRequest request{{o->args.begin(), o->args.end() - 1}, o->args.back(), o->format, o->output};
    return run_sql(request, std::move(args));
  };
});

RegisterCommand tables_command(99, [](CLI::App& app) -> std::function<int()> {
  struct Options {
    std::vector<std::string> paths;
    std::string format = "table";
  };
  auto o = std::make_shared<Options>();
  auto* cmd = app.add_subcommand("tables", "The profile's tables: rows and columns of each");
  cmd->footer("Schemas: docs/tables.md. Runs python3 -m jaxprof.sql, as `sql` does.");
  cmd->add_option("path", o->paths, "Profile")->required();
  cmd->add_option("--format", o->format, "Output format (json: name, rows, columns per table)")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();
  return [o]() {
    std::vector<std::string> args = {"tables"};
    args.insert(args.end(), o->paths.begin(), o->paths.end());
    args.insert(args.end(), {"--format", o->format});
    return exec_python("jaxprof.sql", std::move(args));
  };
});

}  // namespace
}  // namespace jaxprof::cli
