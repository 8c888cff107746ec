// jaxprof timeline: how each device's span splits into compute, exposed communication, exposed
// memory copies and idle time.
#include "cli_common.h"
#include "jaxprof/analysis/compile/compile.h"
#include "jaxprof/analysis/partial/extract_partials.h"
#include "jaxprof/analysis/timeline/timeline.h"
#include "jaxprof/render/text/timeline_render.h"

namespace jaxprof::cli {
namespace {

RegisterCommand timeline_command(26, [](CLI::App& app) -> std::function<int()> {
  struct Options {
    CommonOptions common;
    SteadyStateOptions steady;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = app.add_subcommand(
      "timeline", "Per device: compute, exposed communication, exposed memcpy and idle time");
  cmd->footer(
      "Per device, from its first op to its last: compute (union of compute op intervals),\n"
      "communication not overlapped by compute, memcpy overlapped by neither, and idle time,\n"
      "split into idle inside module executions and idle between them. The four parts add up\n"
      "to the span exactly, with the time set apart from the steady state (autotuning,\n"
      "warm-up executions, compiling). Categories come from the HLO opcode, else the kernel\n"
      "name. See docs/timeline.md and docs/steady-state.md.");
  add_common(cmd, o->common);
  add_host_by_host(cmd, o->common);
  add_steady_state_options(cmd, o->steady);
  return [o]() {
    PartialExtractOptions extract;
    extract.parts = kPartTimeline | kPartExecutions | kPartCompileTotals;
    extract.steady = o->steady;
    LoadedPartials loaded;
    load_set(o->common, extract, loaded);
    TimelineResult r = timeline_from_partials(loaded.set, o->steady);
    CompileResult compiles =
        compile_from_partials(loaded.set, {.top_steps = 1, .totals_only = true});
    say_set_apart(loaded.set, o->steady, &compiles, format_of(o->common) == OutputFormat::kJson);
    write(render_timeline(r, format_of(o->common)));
    return 0;
  };
});

}  // namespace
}  // namespace jaxprof::cli
