// jaxprof check: a CI gate. Exit 3 when NEW is significantly slower than BASE by more than the
// budget, 0 otherwise, 2 for bad input; one line says why either way.
#include <fmt/format.h>

#include "diff_inputs.h"
#include "jaxprof/analysis/regression.h"
#include "jaxprof/render/text.h"
#include "jaxprof/render/units.h"

namespace jaxprof::cli {
namespace {

inline constexpr int kExitRegression = 3;

// Which op of the module grew the most, so that a failing gate points at a suspect.
std::string top_op(const CheckResult& r) {
  if (!r.top_op) return "";
  const DiffRow& op = *r.top_op;
  std::string name = op.new_name.empty() ? op.name : op.name + " -> " + op.new_name;
  std::string what = op.change == Change::kAdded ? "added, " : "";
  std::string share = r.module_delta_ps > 0
                          ? fmt::format(", {} of the module's change",
                                        human_percent(op.delta_ps / r.module_delta_ps))
                          : "";
  // With step marks the step spans several modules: say which one the op is from.
  std::string of =
      std::string_view(r.metric_source) == "step-marks" ? " of module " + r.module : "";
  return fmt::format("; top op{}: {}{} ({}+{} per run{})", of, name,
                     op.op_name.empty() ? "" : " [" + op.op_name + "]", what,
                     human_duration(op.delta_ps), share);
}

std::string reason(const CheckResult& r, double budget, double alpha) {
  if (r.removed)
    return fmt::format("ok: {} is not in NEW (removed; {} per run in BASE)", r.metric,
                       human_duration(r.base_median_ps));
  std::string change =
      r.ratio ? fmt::format("{:+.1f}%", (*r.ratio - 1) * 100) : std::string("from zero");
  bool captures = std::string_view(r.test) == "capture-t";
  std::string numbers =
      captures ? fmt::format(
                     "capture medians (geometric mean) {} -> {}, 95% CI of the ratio [{:.3f}, "
                     "{:.3f}], {} vs {} captures of {} vs {} {}",
                     human_duration(r.base_median_ps), human_duration(r.new_median_ps),
                     r.ratio_ci.low, r.ratio_ci.high, r.base_captures, r.new_captures,
                     r.base_executions, r.new_executions, r.unit)
               : fmt::format("median {} -> {}, 95% CI of the ratio [{:.3f}, {:.3f}], {} vs {} {}",
                             human_duration(r.base_median_ps), human_duration(r.new_median_ps),
                             r.ratio_ci.low, r.ratio_ci.high, r.base_executions, r.new_executions,
                             r.unit);
  std::string test =
      !r.tested  ? fmt::format("too few {} for a test: the medians decided", r.unit)
      : captures ? fmt::format(
                       "one-sided Welch t-test over capture medians p = {:.2g} for slower by "
                       "more than {}",
                       r.p_value, human_percent(budget))
                 : fmt::format("one-sided Mann-Whitney p = {:.2g} for slower by more than {}",
                               r.p_value, human_percent(budget));
  if (r.regression)
    return fmt::format("REGRESSION: {} is {} slower, over the {} budget ({}; {} < {}){}", r.metric,
                       change, human_percent(budget), numbers, test, number(alpha), top_op(r));
  return fmt::format("ok: {} changed {}, within the {} budget ({}; {})", r.metric, change,
                     human_percent(budget), numbers, test);
}

std::string opt_number(const std::optional<double>& v) { return v ? number(*v) : "null"; }

// The verdict as one JSON object on one line, for CI scripts that want the numbers.
std::string json(const CheckResult& r, double budget, double alpha, const std::string& line) {
  std::string top = "null";
  if (r.top_op)
    top = fmt::format(
        "{{\"module\": {}, \"name\": {}, \"new_name\": {}, \"op_name\": {}, \"change\": \"{}\", "
        "\"delta_ns\": {}}}",
        json_string(r.top_op->module), json_string(r.top_op->name),
        r.top_op->new_name.empty() ? "null" : json_string(r.top_op->new_name),
        json_string(r.top_op->op_name), change_name(r.top_op->change),
        ps_to_ns(r.top_op->delta_ps));
  return fmt::format(
      "{{\"verdict\": \"{}\", \"metric\": {}, \"metric_source\": \"{}\", \"step_fallback\": {}, "
      "\"module\": {}, \"unit\": \"{}\", \"test\": \"{}\", \"tested\": {}, \"removed\": {}, "
      "\"max_regression\": {}, \"alpha\": {}, \"p_value\": {}, \"ratio\": {}, "
      "\"ratio_ci\": [{}, {}], \"base_median_ns\": {}, \"new_median_ns\": {}, "
      "\"base_samples\": {}, \"new_samples\": {}, \"base_captures\": {}, \"new_captures\": {}, "
      "\"top_op\": {}, \"reason\": {}}}\n",
      r.regression ? "regression" : "ok", json_string(r.metric), r.metric_source,
      r.step_fallback.empty() ? "null" : json_string(r.step_fallback), json_string(r.module),
      r.unit, r.test, r.tested ? "true" : "false", r.removed ? "true" : "false", number(budget),
      number(alpha), number(r.p_value), opt_number(r.ratio), number(r.ratio_ci.low),
      number(r.ratio_ci.high), ps_to_ns(r.base_median_ps), ps_to_ns(r.new_median_ps),
      r.base_executions, r.new_executions, r.base_captures, r.new_captures, top, json_string(line));
}

RegisterCommand check_command(82, [](CLI::App& app) -> std::function<int()> {
  struct Options {
    TwoProfiles profiles;
    std::string max_regression = "5%", metric = "step", format = "line";
    double alpha = 0.01;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = app.add_subcommand(
      "check", "CI gate: exit 3 when NEW is significantly slower than BASE beyond a budget");
  cmd->footer(
      "Exit codes: 0 within budget, 3 regression, 2 bad input or usage. NEW regresses when the\n"
      "median per-run time of the metric grew by more than --max-regression and a one-sided\n"
      "Mann-Whitney test of NEW against BASE * (1 + budget) gives p < --alpha. With several\n"
      "captures per side (--base A B C --new D E F: separate processes) a one-sided Welch t-test\n"
      "over the log capture medians decides, so that the spread between processes is noise.\n"
      "Metrics: step (the wall time of the steps marked by StepTraceAnnotation when both sides\n"
      "have usable marks, else the module with the most device time in BASE), module:NAME,\n"
      "op:NAME or op:MODULE/NAME. See docs/diff.md.");
  add_two_profiles(cmd, o->profiles);
  cmd->add_option("--max-regression", o->max_regression, "Allowed slowdown, e.g. 5%")
      ->capture_default_str();
  cmd->add_option("--metric", o->metric, "step | module:NAME | op:NAME | op:MODULE/NAME")
      ->capture_default_str();
  cmd->add_option("--alpha", o->alpha, "Significance level of the one-sided test")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  cmd->add_option("--format", o->format, "line (one sentence) or json (one object on one line)")
      ->check(CLI::IsMember({"line", "json"}))
      ->capture_default_str();
  return [o]() {
    CheckOptions c;
    c.metric = o->metric;
    c.alpha = o->alpha;
    c.max_regression = parse_percent("--max-regression", o->max_regression);
    ProfileSamples base = load_side(o->profiles, true, o->format == "json");
    ProfileSamples now = load_side(o->profiles, false, o->format == "json");
    CheckResult r = check_regression(base, now, c);
    std::string line = reason(r, c.max_regression, c.alpha);
    write(o->format == "json" ? json(r, c.max_regression, c.alpha, line) : line + "\n");
    return r.regression ? kExitRegression : 0;
  };
});

}  // namespace
}  // namespace jaxprof::cli
