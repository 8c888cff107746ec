// jaxprof sql and jaxprof tables: SQL over the profile's tables (docs/tables.md). DuckDB's C++
// library is in no Debian package while its Python wheel installs anywhere with pip, so these two
// commands run the Python package (python3 -m jaxprof.sql, the same code as Profile.sql()) with
// the arguments they were given, and say what to install when it is missing.
#include "cli_common.h"
#include "python_handoff.h"

namespace jaxprof::cli {
namespace {

RegisterCommand sql_command(99, [](CLI::App& app) -> std::function<int()> {
  struct Options {
    std::vector<std::string> args;
    std::string format = "table", output;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = app.add_subcommand("sql", "SQL (DuckDB) over the profile's tables");
  cmd->footer(
      "Tables and recipes: docs/tables.md. Runs python3 -m jaxprof.sql (pip install "
      "'jaxprof[sql]'); JAXPROF_PYTHON picks the interpreter. A bad query: DuckDB's message, "
      "exit 2.");
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
    return exec_python("jaxprof.sql", std::move(args));
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
