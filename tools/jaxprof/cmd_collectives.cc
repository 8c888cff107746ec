// jaxprof collectives: sizes, bandwidths, hidden and exposed time, and stragglers.
#include "cli_common.h"
#include "jaxprof/analysis/collectives/collectives.h"
#include "jaxprof/analysis/partial/extract_partials.h"
#include "jaxprof/render/text/collectives_render.h"

namespace jaxprof::cli {
namespace {

RegisterCommand collectives_command(60, [](CLI::App& app) -> std::function<int()> {
  struct Options {
    CommonOptions common;
    SteadyStateOptions steady;
    std::string device;
    size_t top = 0;
    bool instances = false;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = app.add_subcommand(
      "collectives",
      "Collectives: replica-group size, message size, algorithm and bus bandwidth, time hidden "
      "behind compute, and which device makes the others wait");
  cmd->footer(
      "Bandwidth follows nccl-tests: algbw = correction x bytes / time (correction N for\n"
      "all-gather, whose operand is one shard), busbw = algbw x bus factor (all-reduce 2(N-1)/N;\n"
      "all-gather, reduce-scatter, all-to-all (N-1)/N; permute, broadcast 1). Exposed = the\n"
      "collective's interval minus the compute ops running on the same device. See\n"
      "docs/collectives.md.");
  add_common(cmd, o->common);
  add_steady_state_options(cmd, o->steady);
  add_host_by_host(cmd, o->common);
  cmd->add_option("--device", o->device, "Only devices whose name contains this (or re:REGEX)");
  auto* top =
      cmd->add_option("--top", o->top,
                      "Show the N collective ops with the most time (0 = all; default: all, or " +
                          std::to_string(kTerminalTop) + " in a table on a terminal)");
  cmd->add_flag("--instances", o->instances,
                "JSON: list every instance (one execution on all devices of a group)");
  return [o, top]() {
    CollectivesOptions c;
    c.filter.device = o->device;
    c.top = top_for(top, o->top, format_of(o->common));
    c.instances = o->instances;
    EventFilter check(c.filter);
    PartialExtractOptions extract;
    extract.parts = kPartCollectives;
    extract.device = c.filter.device;
    c.steady = o->steady;
    extract.steady = c.steady;
    LoadedPartials loaded;
    load_set(o->common, extract, loaded);
    CollectivesResult r = collectives_from_partials(loaded.set, c);
    say_set_apart(loaded.set, c.steady, nullptr, format_of(o->common) == OutputFormat::kJson);
    warn(r.warnings);
    write(render_collectives(r, format_of(o->common)));
    return 0;
  };
});

}  // namespace
}  // namespace jaxprof::cli
