// Commands whose work lives in the Python package (DuckDB, Arrow and Parquet come as Python
// wheels, in no Debian package): the command replaces itself with python3 running the module.
#pragma once

#include <string>
#include <vector>

namespace jaxprof::cli {

// Runs `main(args)` of the Python module (e.g. "jaxprof.sql") in place of this process, with
// JAXPROF_PYTHON or python3; args[0] names the command in messages. Returns only when the
// interpreter cannot start (exit 2, saying what to install).
int exec_python(const std::string& module, std::vector<std::string> args);

}  // namespace jaxprof::cli
