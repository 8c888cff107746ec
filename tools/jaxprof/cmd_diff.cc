// jaxprof diff: what changed between two profiles of the same program, and is it beyond noise.
#include "diff_inputs.h"
#include "jaxprof/render/diff_render.h"

namespace jaxprof::cli {
namespace {

RegisterCommand diff_command(80, [](CLI::App& app) -> std::function<int()> {
  struct Options {
    TwoProfiles profiles;
    std::string format = "table", min_change = "2%";
    double alpha = 0.01;
    size_t top = 10, rows = 20;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = app.add_subcommand(
      "diff", "Compare two profiles per module, HLO op and category, with significance");
  cmd->footer(
      "Times are per run of each module (steady state, warm-up runs left out). A change is\n"
      "reported as slower/faster when a two-sided Mann-Whitney test over the per-run samples\n"
      "gives p < --alpha and the mean moved by at least --min-change. Ops renamed by the new\n"
      "compilation are matched by opcode, JAX op path and source line. With several captures\n"
      "per side (--base A B C --new D E F: separate processes) a Welch t-test over the capture\n"
      "medians gives p. See docs/diff.md.");
  add_two_profiles(cmd, o->profiles);
  cmd->add_option("--format", o->format, "Output format")
      ->check(CLI::IsMember({"table", "json", "csv"}))
      ->capture_default_str();
  cmd->add_option("--alpha", o->alpha, "Significance level of the test")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  cmd->add_option("--min-change", o->min_change, "Smallest relative change that counts")
      ->capture_default_str();
  cmd->add_option("--top", o->top, "Op differences counted in the explained share")
      ->capture_default_str();
  cmd->add_option("--rows", o->rows, "Op rows in the table (0 = all)")->capture_default_str();
  return [o]() {
    DiffOptions d;
    d.alpha = o->alpha;
    d.min_change = parse_percent("--min-change", o->min_change);
    d.top = o->top;
    OutputFormat format = OutputFormat::kTable;
    parse_output_format(o->format, format);
    ProfileSamples base = load_side(o->profiles, true);
    ProfileSamples now = load_side(o->profiles, false);
    DiffResult r = compute_diff(base, now, d);
    warn(r.warnings);
    write(render_diff(r, format, o->rows));
    return 0;
  };
});

}  // namespace
}  // namespace jaxprof::cli
