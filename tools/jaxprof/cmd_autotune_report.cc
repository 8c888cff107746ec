// jaxprof autotune-report: which candidate configuration is fastest, and is it beyond noise.
#include "cli_common.h"
#include "jaxprof/analysis/autotune/autotune_report.h"
#include "jaxprof/render/text/autotune_render.h"

namespace jaxprof::cli {
namespace {

RegisterCommand autotune_report_command(70, [](CLI::App& app) -> std::function<int()> {
  struct Options {
    CommonOptions common;
    AutotuneReportOptions report;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = app.add_subcommand(
      "autotune-report",
      "Per-candidate timing of autotuning runs: every sample, median, MAD, bootstrap CI, winner");
  cmd->footer(
      "A candidate's runs are the executions of modules whose name matches --pattern (else the\n"
      "device events that match it); a run's time is the union of its op intervals. The winner\n"
      "has the lowest median; it is significant when its 95% CI lies below the runner-up's or a\n"
      "one-sided Mann-Whitney test gives p < 0.05. See docs/autotune.md.");
  add_common(cmd, o->common);
  cmd->add_option("--pattern", o->report.pattern,
                  "RE2 regex naming candidates; group 1 is the candidate id")
      ->capture_default_str();
  cmd->add_flag("--include-warmup", o->report.include_warmup,
                "Count each program's first execution on a device as a sample");
  cmd->add_option("--resamples", o->report.resamples, "Bootstrap resamples")->capture_default_str();
  return [o]() {
    LoadedProfile loaded;
    load(o->common, loaded);
    AutotuneReport r = autotune_report(loaded.profile, o->report);
    warn(loaded.profile.warnings);
    warn(r.warnings);
    write(render_autotune_report(r, format_of(o->common)));
    return 0;
  };
});

}  // namespace
}  // namespace jaxprof::cli
