// jaxprof critical-path: what sets each step's time, and what a change would buy.
#include "cli_common.h"
#include "jaxprof/analysis/critical_path/critical_path.h"
#include "jaxprof/render/text/critical_path_render.h"

namespace jaxprof::cli {
namespace {

RegisterCommand critical_path_command(62, [](CLI::App& app) -> std::function<int()> {
  struct Options {
    CommonOptions common;
    std::vector<std::string> what_if;
    size_t top = 0;
    bool no_rank = false;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = app.add_subcommand(
      "critical-path",
      "Per step: the chain of ops, collectives, host work and gaps that sets its end, each op's "
      "time on it and slack, and what-if replays that predict the step time after a change");
  cmd->footer(
      "Each step (as the profile marks it; the whole profile's device work when it marks none)\n"
      "becomes a graph: program order on each device lane, the host event that launched each\n"
      "execution, collective instances that end for all after the last participant arrives, host\n"
      "events that wait for the device, the step's end. The critical path walks back from the\n"
      "step's end through whatever held each piece of work; its segments are events or named\n"
      "gaps (device/idle, host/launch, host/idle, host/step-start, host/step-end) and add up to\n"
      "the step time. Slack: how much later an op could end without moving the step's end.\n"
      "\n"
      "--what-if SPEC (repeatable; each alone, and all together) changes times and replays:\n"
      "  op=PATTERN:FACTOR        ops (or host events) whose name matches the RE2 pattern\n"
      "  category=NAME:FACTOR     gemm, convolution, attention, elementwise/fusion, collective,\n"
      "                           memcpy, other, host; or gaps: device-idle, launch, host-idle\n"
      "  host=NAME:median         that host at the median host's speed (its compute\n"
      "                           and gaps; its collectives still wait for the others)\n"
      "  collectives=overlapped   collectives cost nothing and hold no one\n"
      "  launches=free            no device op waits for its launch or after its predecessor\n"
      "Scaling a collective scales its transfer after the last arrival; its participants still\n"
      "meet. In a replay a host event within which a device op of its host ends waits for the\n"
      "last such op (it ends as long after it as measured). The table ranks the five candidate\n"
      "changes that would gain most (ops on the path at their roofline time, or half;\n"
      "categories at half; collectives overlapped; launches free; each host at the median).\n"
      "The assumptions that stand in for what the profile cannot show are printed with the\n"
      "output (JSON: 'assumptions'); docs/critical-path.md says how far predictions were off on\n"
      "real captures.\n"
      "Examples:\n"
      "  jaxprof critical-path /tmp/logdir\n"
      "  jaxprof critical-path run/ --what-if 'op=^dot\\.3$:0.5' --what-if collectives=overlapped\n"
      "  jaxprof critical-path prof.xplane.pb --format json | jq '.steps[].critical_ns'");
  add_common(cmd, o->common);
  cmd->add_option("--what-if", o->what_if, "A change to replay (see below); repeatable");
  auto* top = cmd->add_option(
      "--top", o->top,
      "Ops per step (and path segments in the table) to show (0 = all; default: all, or " +
          std::to_string(kTerminalTop) + " in a table on a terminal)");
  cmd->add_flag("--no-rank", o->no_rank, "Do not rank candidate changes (saves their replays)");
  return [o, top]() {
    refuse_partials(o->common, "critical-path");
    CriticalPathOptions opts;
    for (const std::string& s : o->what_if) opts.what_ifs.push_back(parse_what_if(s));
    opts.rank = !o->no_rank;
    opts.top_ops = o->top;
    LoadedProfile loaded;
    load(o->common, loaded);
    const CriticalPathResult r = compute_critical_path(loaded.profile, opts);
    warn(loaded.profile.warnings);
    warn(r.warnings);
    const OutputFormat format = format_of(o->common);
    write(render_critical_path(r, format, o->top ? o->top : top_for(top, 0, format)));
    return 0;
  };
});

}  // namespace
}  // namespace jaxprof::cli
