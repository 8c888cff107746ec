// jaxprof kernels: GPU kernels with their launch configurations and the ops that launched them.
#include <cstdio>

#include "cli_common.h"
#include "jaxprof/analysis/ops/kernels.h"
#include "jaxprof/analysis/partial/extract_partials.h"
#include "jaxprof/common/error.h"
#include "jaxprof/render/text/kernels_render.h"

namespace jaxprof::cli {
namespace {

RegisterCommand kernels_command(65, [](CLI::App& app) -> std::function<int()> {
  struct Options {
    CommonOptions common;
    SteadyStateOptions steady;
    EventFilterFlags filter;
    size_t top = 0;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = app.add_subcommand(
      "kernels",
      "GPU kernels: time, launch configuration (grid, block, registers, shared memory, "
      "occupancy) and the HLO/JAX op behind each");
  cmd->footer(
      "Per kernel name over all GPUs: count, total, mean, min, max, share of all kernel time, and\n"
      "each launch configuration from the kernel_details stat. Copies and fills on the streams\n"
      "are left out. On TPU or CPU profiles it says there are no GPU kernels (exit 0). Reads\n"
      "profiles host by host, or partial summaries (`jaxprof partial`). See docs/kernels.md.");
  add_common(cmd, o->common);
  add_host_by_host(cmd, o->common);
  add_steady_state_options(cmd, o->steady);
  add_event_filter_options(cmd, o->filter,
                           {.devices = "GPUs", .names = "kernels", .durations = "launches"});
  auto* top = cmd->add_option("--top", o->top,
                              "Show the N kernels with the most time (0 = all; default: all, or " +
                                  std::to_string(kTerminalTop) + " in a table on a terminal)");
  return [o, top]() {
    KernelsOptions k;
    k.filter = o->filter.spec();
    k.top = top_for(top, o->top, format_of(o->common));
    EventFilter check(k.filter);  // reject a bad regex before loading anything
    if (names_partials(o->common.paths) && k.filter.min_duration_ps > 0)
      throw InputError(o->common.paths.front(),
                       "--min-duration needs the events, which a partial summary does not "
                       "keep: give the profiles");
    k.steady = o->steady;
    PartialExtractOptions extract;
    extract.parts = kPartKernels;
    extract.kernel_filter = k.filter;
    extract.steady = k.steady;
    LoadedPartials loaded;
    load_set(o->common, extract, loaded);
    KernelsResult r = kernels_from_partials(loaded.set, k);
    say_set_apart(loaded.set, k.steady, nullptr, format_of(o->common) == OutputFormat::kJson);
    warn(r.warnings);
    // Tables say it on stdout; for JSON/CSV the message goes to stderr so stdout stays parseable.
    if (!r.no_gpu_reason.empty() && format_of(o->common) != OutputFormat::kTable)
      std::fprintf(stderr, "jaxprof: %s\n", r.no_gpu_reason.c_str());
    write(render_kernels(r, format_of(o->common)));
    return 0;
  };
});

}  // namespace
}  // namespace jaxprof::cli
