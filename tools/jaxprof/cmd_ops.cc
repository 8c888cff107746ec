// jaxprof ops: which ops take the time.
#include "cli_common.h"
#include "jaxprof/analysis/ops/ops.h"
#include "jaxprof/analysis/partial/extract_partials.h"
#include "jaxprof/common/error.h"
#include "jaxprof/render/text/ops_render.h"

namespace jaxprof::cli {
namespace {

RegisterCommand ops_command(20, [](CLI::App& app) -> std::function<int()> {
  struct Options {
    CommonOptions common;
    std::string group_by = "hlo-op";
    EventFilterFlags filter;
    size_t top = 0;
    uint64_t max_events = 0;
    bool by_program = false;
    SteadyStateOptions steady;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = app.add_subcommand(
      "ops", "Device time per HLO op, kernel, module, name, category or HLO opcode");
  cmd->footer(
      "Per group: count, total, self time, mean, min, max, std and share of the device's busy\n"
      "time (the union of its op intervals, unchanged by filters). Device ops are GPU stream\n"
      "events, TPU 'XLA Ops' events, or on the CPU backend the host-thread events that carry an\n"
      "hlo_op stat (one device per device_ordinal). See docs/cli.md.");
  add_common(cmd, o->common);
  add_host_by_host(cmd, o->common);
  cmd->add_option("--group-by", o->group_by, "Group events by")
      ->check(CLI::IsMember({"hlo-op", "kernel", "module", "name", "category", "opcode"}))
      ->capture_default_str();
  add_event_filter_options(cmd, o->filter);
  auto* top = cmd->add_option("--top", o->top,
                              "Show the N largest groups per device (0 = all; default: all, or " +
                                  std::to_string(kTerminalTop) + " in a table on a terminal)");
  cmd->add_option("--max-events", o->max_events,
                  "Stop counting after N selected events, with a warning (0 = no cap)");
  add_steady_state_options(cmd, o->steady);
  cmd->add_flag("--by-program", o->by_program,
                "hlo-op groups: one row per program, not per module name (programs that share a "
                "name, e.g. one function jitted for several shapes, are merged by default)");
  return [o, top]() {
    OpsOptions ops;
    parse_group_by(o->group_by, ops.group_by);
    ops.filter = o->filter.spec();
    ops.filter.max_events = o->max_events;
    ops.top = top_for(top, o->top, format_of(o->common));
    ops.by_program = o->by_program;
    ops.steady = o->steady;
    EventFilter check(ops.filter);  // reject a bad regex before loading anything
    OpsResult r;
    if (o->max_events > 0) {
      // The cap counts events across hosts in order: one profile of every host.
      LoadedProfile loaded;
      // Telling steady executions apart reads the host's launches on GPUs.
      load(o->common, loaded, ops.steady.include_autotuning && ops.steady.include_warmup);
      r = compute_ops(loaded.profile, ops);
      say_set_apart(loaded.profile, ops.steady, false, format_of(o->common) == OutputFormat::kJson);
      warn(loaded.profile.warnings);
    } else {
      PartialExtractOptions extract;
      extract.parts = kPartOps;
      extract.op_filter = ops.filter;
      extract.steady = ops.steady;
      if (names_partials(o->common.paths) && ops.filter.min_duration_ps > 0)
        throw InputError(o->common.paths.front(),
                         "--min-duration needs the events, which a partial summary does not "
                         "keep: give the profiles");
      // Ops decode the device lines and read nothing else: the files need not stay resident.
      LoadedPartials loaded;
      load_set(o->common, extract, loaded, {}, {}, /*release_counted=*/true);
      r = ops_from_partials(loaded.set, ops);
      say_set_apart(loaded.set, ops.steady, nullptr, format_of(o->common) == OutputFormat::kJson);
    }
    warn(r.warnings);
    write(render_ops(r, format_of(o->common)));
    return 0;
  };
});

}  // namespace
}  // namespace jaxprof::cli
