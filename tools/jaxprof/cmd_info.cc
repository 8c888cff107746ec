// jaxprof info: what a profile holds.
#include "cli_common.h"
#include "jaxprof/analysis/summary/info.h"
#include "jaxprof/render/text/info_render.h"

namespace jaxprof::cli {
namespace {

RegisterCommand info_command(10, [](CLI::App& app) -> std::function<int()> {
  struct Options {
    CommonOptions common;
    bool all_lines = false;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = app.add_subcommand(
      "info", "Hosts, devices (with capabilities), lines, event counts, time span and modules");
  add_common(cmd, o->common);
  cmd->add_flag("--all-lines", o->all_lines, "List every line (default: 12 per plane)");
  return [o]() {
    LoadedProfile loaded;
    load(o->common, loaded);
    write(render_info(compute_info(loaded.profile), format_of(o->common), o->all_lines));
    return 0;
  };
});

}  // namespace
}  // namespace jaxprof::cli
