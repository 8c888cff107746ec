// jaxprof: where does a JAX program's time go? Parses the command line and runs the chosen
// subcommand (each in its own cmd_*.cc). Exit codes: 0 success, 2 bad input or usage, 1 internal
// error.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <exception>
#include <new>
#include <vector>

#include "cli_common.h"
#include "jaxprof/common/error.h"

#ifdef __GLIBC__
#include <malloc.h>
#endif

int main(int argc, char** argv) {
  using namespace jaxprof::cli;
  // Analyses build and drop large temporaries one after another: keep freed memory in the heap
  // for the next one instead of handing it back to the kernel and faulting it in again zeroed.
  // The process is short-lived, so holding its peak until exit costs nothing.
#ifdef __GLIBC__
  mallopt(M_MMAP_THRESHOLD, 256 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif
  CLI::App app{
      "jaxprof: where does my JAX program's time go?\n"
      "Reads profiles written by jax.profiler (*.xplane.pb, log directories) and reports exact\n"
      "per-op, per-kernel and per-module device time.\n\n"
      "Examples:\n"
      "  jaxprof /tmp/logdir                           the one-screen summary\n"
      "  jaxprof info /tmp/logdir                      what the newest capture holds\n"
      "  jaxprof ops /tmp/logdir                       top HLO ops per device\n"
      "  jaxprof ops prof.xplane.pb --group-by kernel --top 20\n"
      "  jaxprof ops prof.xplane.pb --match 'fusion|dot' --format json\n",
      "jaxprof"};
  app.set_version_flag("--version", "jaxprof 0.1.0");
  app.require_subcommand(1);

  auto commands = registered_commands();
  std::stable_sort(commands.begin(), commands.end(),
                   [](const auto& a, const auto& b) { return a.order < b.order; });
  std::vector<std::pair<CLI::App*, std::function<int()>>> runners;
  for (const auto& c : commands) {
    size_t before = app.get_subcommands({}).size();
    auto run = c.setup(app);
    runners.emplace_back(app.get_subcommands({})[before], std::move(run));
  }

  // Tables on a terminal fit its width (--wide turns this off while parsing).
  jaxprof::set_table_layout({.wide = false, .line_width = terminal_width()});
  if (argc == 1) {
    std::fputs(app.help().c_str(), stderr);
    return kExitBadInput;
  }
  // `jaxprof PATH ...` (a first argument that is neither an option nor a command) runs summary.
  std::vector<char*> args(argv, argv + argc);
  if (argv[1][0] != '-') {
    bool is_command = false;
    for (const auto& [cmd, run] : runners) is_command = is_command || cmd->check_name(argv[1]);
    static char summary[] = "summary";
    if (!is_command) args.insert(args.begin() + 1, summary);
  }
  try {
    app.parse(static_cast<int>(args.size()), args.data());
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return kExitBadInput;
  }

  try {
    for (auto& [cmd, run] : runners)
      if (cmd->parsed()) return run();
  } catch (const jaxprof::InputError& e) {
    std::fprintf(stderr, "jaxprof: %s\n", e.what());
    return kExitBadInput;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "jaxprof: out of memory\n");
    return kExitInternal;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "jaxprof: internal error: %s\n", e.what());
    return kExitInternal;
  }
  return 0;
}
