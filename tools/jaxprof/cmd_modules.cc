// jaxprof modules: per XLA program, its executions, steady-state time and variability.
#include "cli_common.h"
#include "jaxprof/analysis/partial/extract_partials.h"
#include "jaxprof/analysis/steps/modules.h"
#include "jaxprof/render/text/modules_render.h"

namespace jaxprof::cli {
namespace {

RegisterCommand modules_command(24, [](CLI::App& app) -> std::function<int()> {
  struct Options {
    CommonOptions common;
    SteadyStateOptions steady;
    size_t top_ops = 5;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = app.add_subcommand(
      "modules", "Per XLA module: executions, warm-up apart, mean ± std, share, varying ops");
  cmd->footer(
      "An execution is one run of a compiled program on one device (TPU 'XLA Modules' events,\n"
      "CPU ops of one run_id, GPU kernels of one host ExecuteThunks call). The first run of\n"
      "each program on each device is warm-up and is kept out of mean/std. See docs/modules.md.");
  add_common(cmd, o->common);
  add_steady_state_options(cmd, o->steady);
  add_host_by_host(cmd, o->common);
  cmd->add_option("--top-ops", o->top_ops, "Most varying ops shown per module")
      ->capture_default_str();
  return [o]() {
    PartialExtractOptions extract;
    extract.parts =
        kPartExecutions | kPartSteps | (o->top_ops > 0 ? uint32_t{kPartExecutionOps} : 0u);
    extract.steady = o->steady;
    LoadedPartials loaded;
    load_set(o->common, extract, loaded);
    ModulesResult r = modules_from_partials(loaded.set, {.top_ops = o->top_ops, .steady = o->steady});
    say_set_apart(loaded.set, o->steady, nullptr, format_of(o->common) == OutputFormat::kJson);
    write(render_modules(r, format_of(o->common)));
    return 0;
  };
});

}  // namespace
}  // namespace jaxprof::cli
