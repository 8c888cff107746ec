// jaxprof hosts: stragglers, step-time outliers, idle and clock offsets across hosts.
#include "cli_common.h"
#include "jaxprof/analysis/hosts/hosts.h"
#include "jaxprof/render/text/hosts_render.h"

namespace jaxprof::cli {
namespace {

RegisterCommand hosts_command(98, [](CLI::App& app) -> std::function<int()> {
  struct Options {
    CommonOptions common;
    size_t top = 0;
    double outlier_score = 3.5;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = app.add_subcommand(
      "hosts",
      "Hosts against each other: which host the others wait for at collectives (ranked), step-time "
      "outliers, idle and host-bound time, clock offsets");
  cmd->footer(
      "A host's arrival at a collective is judged by its shortest execution of it (the device "
      "that\n"
      "arrives last waits least), which needs no common clock. Takes profiles or partials; hosts\n"
      "are read one at a time. See docs/multihost.md.");
  add_common(cmd, o->common);
  add_host_by_host(cmd, o->common);
  auto* top = cmd->add_option("--top", o->top,
                              "Hosts shown in the table (0 = all; default: all, or " +
                                  std::to_string(kTerminalTop) + " on a terminal)");
  cmd->add_option("--outlier-score", o->outlier_score,
                  "Robust z-score of a host's median step time above which it is slow")
      ->capture_default_str();
  return [o, top]() {
    LoadedPartials loaded;
    load_set(o->common, kPartTimeline | kPartExecutions | kPartSteps | kPartCollectives, loaded);
    HostsResult r = hosts_from_partials(loaded.set, {.outlier_score = o->outlier_score});
    const OutputFormat format = format_of(o->common);
    write(render_hosts(r, format, top_for(top, o->top, format)));
    return 0;
  };
});

}  // namespace
}  // namespace jaxprof::cli
