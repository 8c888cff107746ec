// jaxprof summary: the one-screen answer (also what `jaxprof PATH` runs).
#include <optional>

#include "cli_common.h"
#include "jaxprof/analysis/partial/extract_partials.h"
#include "jaxprof/analysis/summary/summary.h"
#include "jaxprof/render/text/summary_render.h"

namespace jaxprof::cli {
namespace {

RegisterCommand summary_command(5, [](CLI::App& app) -> std::function<int()> {
  struct Options {
    CommonOptions common;
    size_t top = 5;
    size_t observations = 3;
    SteadyStateOptions steady;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = app.add_subcommand(
      "summary",
      "One screen: device time and idle share, top modules, ops, collectives, compile time, the "
      "median step's critical path, and the observations most worth acting on (default: "
      "`jaxprof PATH`)");
  cmd->footer(
      "The critical path needs the events of one profile that marks steps: for several hosts\n"
      "and partial files it says why not (jaxprof critical-path reads them).\n"
      "See docs/summary.md for the sections and the observation rules.");
  // One screen has no single table shape: JSON carries every section.
  add_common(cmd, o->common, {"table", "json"});
  add_host_by_host(cmd, o->common);
  cmd->add_option("--top", o->top, "Rows per section")->capture_default_str();
  cmd->add_option("--observations", o->observations, "Observations shown")->capture_default_str();
  add_steady_state_options(cmd, o->steady);
  return [o]() {
    PartialExtractOptions extract;
    extract.parts = summary_parts();
    extract.steady = o->steady;
    LoadedPartials loaded;
    // The critical path needs the events: followed while the one profile read is in memory.
    std::optional<CriticalPathDigest> path;
    load_set(
        o->common, extract, loaded,
        [&](const Profile& profile) {
          // An archive of several processes: as partials.
          if (profile.hosts.size() == 1) path = summary_critical_path(profile, o->top);
        },
        {}, /*release_counted=*/true);
    SummaryOptions options;
    options.top = o->top;
    options.observations = o->observations;
    options.steady = o->steady;
    SummaryResult r = summary_from_partials(loaded.set, options);
    if (path && r.hosts.size() == 1) r.critical_path = std::move(*path);
    warn(r.warnings);
    write(render_summary(r, format_of(o->common)));
    return 0;
  };
});

}  // namespace
}  // namespace jaxprof::cli
