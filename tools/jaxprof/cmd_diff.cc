// jaxprof diff: what changed between two profiles of the same program, and is it beyond noise.

#include "diff_inputs.h"
#include "jaxprof/render/text/diff_render.h"
#include "jaxprof/render/html/html_diff.h"

namespace jaxprof::cli {
namespace {

RegisterCommand diff_command(80, [](CLI::App& app) -> std::function<int()> {
  struct Options {
    TwoProfiles profiles;
    std::string format, output, title, min_change = "2%";
    double alpha = 0.01;
    size_t top = 10, rows = 20;
    bool rows_given = false;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = app.add_subcommand(
      "diff", "Compare two profiles per module, HLO op and category, with significance");
  cmd->footer(
      "Times are per run of each module (steady state, warm-up runs left out). Each row shows\n"
      "the change the test measured: the Hodges-Lehmann ratio (median of the pairwise NEW/BASE\n"
      "ratios of the runs) with its (1 - alpha) interval from the two-sided Mann-Whitney test,\n"
      "and a verdict: slower/faster when p < --alpha and the ratio moved by at least\n"
      "--min-change, same when the interval lies within +/- --min-change, unclear otherwise.\n"
      "Contributions (change of the mean x runs) add up to the total; shares are of the op time\n"
      "that moved either way, never over 100%. Ops renamed by the new compilation are matched\n"
      "by opcode, JAX op path and source line. With several captures per side (--base A B C\n"
      "--new D E F: separate processes) a Welch t-test over the log capture medians gives p and\n"
      "the interval. --format html (or -o FILE.html) writes one self-contained page. See\n"
      "docs/diff.md.");
  add_two_profiles(cmd, o->profiles);
  cmd->add_option("--format", o->format,
                  "Output format: table, json, csv or html (default: from the -o suffix, else "
                  "table)")
      ->check(CLI::IsMember({"table", "json", "csv", "html"}));
  cmd->add_option("-o,--output", o->output, "Write to this file instead of stdout");
  add_wide_option(cmd);
  cmd->add_option("--title", o->title, "HTML page title (default: jaxprof diff)");
  cmd->add_option("--alpha", o->alpha, "Significance level of the test")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  cmd->add_option("--min-change", o->min_change,
                  "Smallest relative change called slower or faster (and the band of same)")
      ->capture_default_str();
  cmd->add_option("--top", o->top, "Op differences whose share of the moved op time is given")
      ->capture_default_str();
  cmd->add_option("--rows", o->rows, "Op rows in the table (0 = all; HTML: default all)");
  auto* rows = cmd->get_option("--rows");
  return [o, rows]() {
    o->rows_given = rows->count() > 0;
    DiffOptions d;
    d.alpha = o->alpha;
    d.min_change = parse_percent("--min-change", o->min_change);
    d.top = o->top;
    std::string format = o->format;
    if (format.empty()) {
      format = "table";
      for (const char* f : {"html", "json", "csv"})
        if (o->output.ends_with(std::string(".") + f)) format = f;
    }
    ProfileSamples base = load_side(o->profiles, true, format == "json");
    ProfileSamples now = load_side(o->profiles, false, format == "json");
    DiffResult r = compute_diff(base, now, d);
    warn(r.warnings);
    std::string text;
    if (format == "html") {
      HtmlDiffOptions h;
      h.base = side_paths(o->profiles.base_arg, o->profiles.base, "BASE", "--base");
      h.now = side_paths(o->profiles.new_arg, o->profiles.now, "NEW", "--new");
      if (!o->title.empty()) h.title = o->title;
      h.rows = o->rows_given ? o->rows : 0;
      text = render_html_diff(r, h);
    } else {
      OutputFormat f = OutputFormat::kTable;
      parse_output_format(format, f);
      text = render_diff(r, f, o->rows);
    }
    if (o->output.empty()) {
      write(text);
      return 0;
    }
    write_file(o->output, text, format == "html" ? "HTML diff" : format + " diff",
               format == "html" ? "  open it in a web browser\n" : "");
    return 0;
  };
});

}  // namespace
}  // namespace jaxprof::cli
