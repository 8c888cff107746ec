// jaxprof check: a CI gate with three verdicts. Exit 0 when NEW is shown to be within the
// budget, 3 when it is shown to be slower beyond it, 4 when the samples cannot tell (or what
// --inconclusive asks), 2 for bad input; one line says why either way.
#include <fmt/format.h>

#include <cmath>

#include "diff_inputs.h"
#include "jaxprof/analysis/stats/regression.h"
#include "jaxprof/render/text/change_text.h"
#include "jaxprof/render/text/text.h"
#include "jaxprof/common/units.h"

namespace jaxprof::cli {
namespace {

inline constexpr int kExitRegression = 3;
inline constexpr int kExitInconclusive = 4;

// Which op of the module grew the most, so that a failing gate points at a suspect.
std::string top_op(const CheckResult& r) {
  if (!r.top_op) return "";
  const DiffRow& op = *r.top_op;
  std::string name = op.new_name.empty() ? op.name : op.name + " -> " + op.new_name;
  std::string what = op.change == Change::kAdded ? "added, " : "";
  // Absolute numbers, not a share: other ops may have got faster, so one op's change can be
  // larger than the module's.
  std::string share =
      fmt::format("; the module's mean run changed {}{}", r.module_delta_ps > 0 ? "+" : "",
                  human_duration(r.module_delta_ps));
  // With step marks the step spans several modules: say which one the op is from.
  std::string of =
      std::string_view(r.metric_source) == "step-marks" ? " of module " + r.module : "";
  return fmt::format("; top op{}: {}{} ({}+{} per run{})", of, name,
                     op.op_name.empty() ? "" : " [" + op.op_name + "]", what,
                     human_duration(op.delta_ps), share);
}

bool over_captures(const CheckResult& r) { return std::string_view(r.test) == "capture-t"; }

// "1 more capture", "12 more runs": what a sample of the test is.
std::string more_samples(size_t n, const CheckResult& r) {
  std::string unit = over_captures(r) ? "captures" : r.unit;
  if (n == 1) unit.pop_back();
  return fmt::format("{} more {}", n, unit);
}

std::string more_text(const CheckResult& r, double alpha) {
  if (!r.more)
    return "; more samples of this spread would not decide: the estimate sits at the budget";
  if (r.more->at_least)
    return fmt::format(
        "; too few {} for the test to reject anything at alpha {}: it needs at "
        "least {} per side",
        over_captures(r) ? "captures" : r.unit, number(alpha), more_samples(r.more->per_side, r));
  return fmt::format("; about {} per side would decide, if the spread stays as it is",
                     more_samples(r.more->per_side, r));
}

std::string reason(const CheckResult& r, double budget, double alpha) {
  if (r.removed)
    return fmt::format("ok: {} is not in NEW (removed; {} per run in BASE)", r.metric,
                       human_duration(r.base_median_ps));
  std::string change = r.ratio ? change_percent(*r.ratio) : std::string("from zero");
  std::string level = human_percent(r.interval_level);
  std::string interval =
      fmt::format("{} interval {}", level, change_interval(r.ratio_low, r.ratio_high));
  std::string numbers =
      over_captures(r)
          ? fmt::format(
                "capture medians (geometric mean) {} -> {}, {} vs {} captures of {} vs "
                "{} {}",
                human_duration(r.base_median_ps), human_duration(r.new_median_ps), r.base_captures,
                r.new_captures, r.base_executions, r.new_executions, r.unit)
          : fmt::format("median {} -> {}, {} vs {} {}", human_duration(r.base_median_ps),
                        human_duration(r.new_median_ps), r.base_executions, r.new_executions,
                        r.unit);
  std::string test =
      over_captures(r) ? "one-sided Welch t-test over capture medians" : "one-sided Mann-Whitney";
  std::string estimate = over_captures(r) ? "ratio of the geometric means" : "Hodges-Lehmann ratio";
  std::string limit = human_percent(budget);
  switch (r.verdict) {
    case Verdict::kRegression:
      return fmt::format(
          "REGRESSION: {} is {} slower ({}, {}), over the {} budget ({}; {} p = {:.2g} < {} for "
          "slower by more than {}){}",
          r.metric, change, estimate, interval, limit, numbers, test, r.p_greater, number(alpha),
          limit, top_op(r));
    case Verdict::kOk:
      return fmt::format(
          "ok: {} changed {} ({}, {}), within the {} budget ({}; {} p = {:.2g} < {} for slower "
          "by less than {})",
          r.metric, change, estimate, interval, limit, numbers, test, r.p_less, number(alpha),
          limit);
    case Verdict::kInconclusive:
      break;
  }
  return fmt::format(
      "INCONCLUSIVE: {} changed {} ({}, {}), which holds the {} budget: the samples cannot tell "
      "whether it is over ({}; {} p = {:.2g} for slower by more than {}, p = {:.2g} for less, "
      "neither < {}){}",
      r.metric, change, estimate, interval, limit, numbers, test, r.p_greater, limit, r.p_less,
      number(alpha), more_text(r, alpha));
}

std::string opt_number(const std::optional<double>& v) { return v ? number(*v) : "null"; }

std::string bound(double v) { return v > 0 && std::isfinite(v) ? number(v) : "null"; }

// The verdict as one JSON object on one line, for CI scripts that want the numbers.
std::string json(const CheckResult& r, double budget, double alpha, int exit_code,
                 const std::string& line) {
  std::string top = "null";
  if (r.top_op)
    top = fmt::format(
        "{{\"module\": {}, \"name\": {}, \"new_name\": {}, \"op_name\": {}, \"change\": \"{}\", "
        "\"delta_ns\": {}}}",
        json_string(r.top_op->module), json_string(r.top_op->name),
        r.top_op->new_name.empty() ? "null" : json_string(r.top_op->new_name),
        json_string(r.top_op->op_name), change_name(r.top_op->change),
        ps_to_ns(r.top_op->delta_ps));
  std::string more = "null";
  if (r.more)
    more = fmt::format("{{\"per_side\": {}, \"at_least\": {}}}", r.more->per_side,
                       r.more->at_least ? "true" : "false");
  return fmt::format(
      "{{\"verdict\": \"{}\", \"exit_code\": {}, \"metric\": {}, \"metric_source\": \"{}\", "
      "\"step_fallback\": {}, \"module\": {}, \"unit\": \"{}\", \"test\": \"{}\", "
      "\"removed\": {}, \"max_regression\": {}, \"alpha\": {}, \"p_value\": {}, "
      "\"p_within\": {}, \"ratio\": {}, \"ratio_ci\": [{}, {}], \"interval_level\": {}, "
      "\"base_median_ns\": {}, \"new_median_ns\": {}, \"base_samples\": {}, \"new_samples\": {}, "
      "\"base_captures\": {}, \"new_captures\": {}, \"more_samples\": {}, \"top_op\": {}, "
      "\"reason\": {}}}\n",
      verdict_name(r.verdict), exit_code, json_string(r.metric), r.metric_source,
      r.step_fallback.empty() ? "null" : json_string(r.step_fallback), json_string(r.module),
      r.unit, r.test, r.removed ? "true" : "false", number(budget), number(alpha),
      number(r.p_greater), number(r.p_less),
      opt_number(r.ratio && std::isfinite(*r.ratio) ? r.ratio : std::nullopt), bound(r.ratio_low),
      bound(r.ratio_high), number(r.interval_level), ps_to_ns(r.base_median_ps),
      ps_to_ns(r.new_median_ps), r.base_executions, r.new_executions, r.base_captures,
      r.new_captures, more, top, json_string(line));
}

RegisterCommand check_command(82, [](CLI::App& app) -> std::function<int()> {
  struct Options {
    TwoProfiles profiles;
    std::string max_regression = "5%", metric = "step", format = "line", inconclusive = "exit4";
    double alpha = 0.01;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = app.add_subcommand(
      "check",
      "CI gate: exit 3 when NEW is slower than BASE beyond a budget, 0 within it, 4 undecided");
  cmd->footer(
      "Exit codes: 0 ok (NEW shown within the budget), 3 regression (NEW shown slower than\n"
      "BASE by more than --max-regression), 4 inconclusive (the samples cannot tell: too few,\n"
      "or an interval that holds the budget; --inconclusive pass|fail maps it to 0 or 3),\n"
      "2 bad input or usage. The test of NEW against BASE * (1 + budget), one-sided both ways at\n"
      "--alpha: Mann-Whitney over the runs (steps) with one capture per side; with several\n"
      "captures per side (--base A B C --new D E F: separate processes) Welch's t-test over the\n"
      "log capture medians, so that the spread between processes is noise. The line shows the\n"
      "estimate that goes with the test and its (1 - 2 alpha) interval, and when inconclusive\n"
      "how many more runs or captures would decide. Metrics: step (the wall time of the steps\n"
      "marked by StepTraceAnnotation when both sides have usable marks, else the module with\n"
      "the most device time in BASE), module:NAME, op:NAME or op:MODULE/NAME. See docs/diff.md.");
  add_two_profiles(cmd, o->profiles);
  cmd->add_option("--max-regression", o->max_regression, "Allowed slowdown, e.g. 5%")
      ->capture_default_str();
  cmd->add_option("--metric", o->metric, "step | module:NAME | op:NAME | op:MODULE/NAME")
      ->capture_default_str();
  cmd->add_option("--alpha", o->alpha, "Significance level of each one-sided test")
      ->check(CLI::Range(0.0, 0.5))
      ->capture_default_str();
  cmd->add_option("--format", o->format, "line (one sentence) or json (one object on one line)")
      ->check(CLI::IsMember({"line", "json"}))
      ->capture_default_str();
  cmd->add_option("--inconclusive", o->inconclusive,
                  "Exit code when the samples cannot decide: exit4, pass (0) or fail (3)")
      ->check(CLI::IsMember({"exit4", "pass", "fail"}))
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
    int code = r.verdict == Verdict::kRegression ? kExitRegression
               : r.verdict == Verdict::kOk       ? 0
               : o->inconclusive == "pass"       ? 0
               : o->inconclusive == "fail"       ? kExitRegression
                                                 : kExitInconclusive;
    write(o->format == "json" ? json(r, c.max_regression, c.alpha, code, line) : line + "\n");
    return code;
  };
});

}  // namespace
}  // namespace jaxprof::cli
