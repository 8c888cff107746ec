#include "python_handoff.h"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iostream>

namespace jaxprof::cli {
namespace {

// Run by the interpreter (argv[1] is the module, argv[2] the command): a clear message (exit 2)
// when the package is not importable. A module with an exit_command(code) ends the process
// through it (jaxprof.sql skips the interpreter's teardown); others exit as usual.
constexpr const char* kBootstrap =
    "import importlib, sys\n"
    "try:\n"
    "    module = importlib.import_module(sys.argv[1])\n"
    "    main = module.main\n"
    "except ImportError as e:\n"
    "    sys.stderr.write('jaxprof: ' + sys.argv[2] + ' runs in Python and needs the jaxprof '\n"
    "        'package with pyarrow and duckdb: pip install \"jaxprof[sql]\" (from a source tree: "
    "'\n"
    "        'PYTHONPATH=python with the built _core module in python/jaxprof) (' + str(e) + "
    "')\\n')\n"
    "    sys.exit(2)\n"
    "getattr(module, 'exit_command', sys.exit)(main(sys.argv[2:]))\n";

}  // namespace

int exec_python(const std::string& module, std::vector<std::string> args) {
  const char* env = std::getenv("JAXPROF_PYTHON");
  std::string python = env && *env ? env : "python3";
  std::vector<std::string> argv = {python, "-c", kBootstrap, module};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> raw;
  for (std::string& a : argv) raw.push_back(a.data());
  raw.push_back(nullptr);
  std::cout.flush();
  execvp(python.c_str(), raw.data());
  std::cerr << "jaxprof: " << args[0] << " runs in Python: cannot run " << python << " ("
            << std::strerror(errno)
            << "); install python3 and pip install 'jaxprof[sql]', or set JAXPROF_PYTHON\n";
  return 2;
}

}  // namespace jaxprof::cli
