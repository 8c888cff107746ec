// jaxprof export: the device timeline as a Chrome/Perfetto trace with derived tracks.
#include <fmt/format.h>

#include "cli_common.h"
#include "jaxprof/common/error.h"
#include "jaxprof/render/perfetto/perfetto.h"

namespace jaxprof::cli {
namespace {

RegisterCommand export_command(90, [](CLI::App& app) -> std::function<int()> {
  struct Options {
    CommonOptions common;
    std::string perfetto;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = app.add_subcommand(
      "export", "Write the device timeline as a Perfetto/Chrome trace (JSON, .gz compresses)");
  cmd->footer(
      "Per device: a 'category' track (compute, exposed communication, exposed memcpy, idle),\n"
      "a 'modules' track, and the op lines with each op's HLO name, JAX op path, source line,\n"
      "category and collective bandwidth in its args. Open the file in ui.perfetto.dev.\n"
      "See docs/export.md.");
  add_common(cmd, o->common, /*formats=*/{});  // the file is the output
  cmd->add_option("--perfetto", o->perfetto, "Output file (*.json or *.json.gz)")->required();
  return [o]() {
    LoadedProfile loaded;
    load(o->common, loaded);
    PerfettoSummary s = write_perfetto_file(loaded.profile, o->perfetto);
    warn(loaded.profile.warnings);
    for (const std::string& n : s.notes) std::fprintf(stderr, "jaxprof: note: %s\n", n.c_str());
    announce_written(
        o->perfetto,
        fmt::format("Perfetto/Chrome trace, {} devices, {} op events, {} category segments, {} "
                    "module executions, {} collective events with bandwidth",
                    s.devices, s.op_events, s.segments, s.executions, s.collective_events),
        "  open https://ui.perfetto.dev and use \"Open trace file\" (or `jaxprof view`)\n");
    return 0;
  };
});

}  // namespace
}  // namespace jaxprof::cli
