#include "jaxprof/render/text/diff_render.h"

#include <fmt/format.h>

#include <cmath>

#include "jaxprof/render/text/change_text.h"
#include "jaxprof/common/units.h"

namespace jaxprof {

namespace {

std::string opt(const std::optional<double>& v) { return v ? number(*v) : "null"; }

// The interval's ends, null where unbounded (0 below, +inf above) or without an estimate.
std::optional<double> low_bound(const DiffRow& r) {
  return r.ratio && r.ratio_low > 0 ? std::optional<double>(r.ratio_low) : std::nullopt;
}
std::optional<double> high_bound(const DiffRow& r) {
  return r.ratio && std::isfinite(r.ratio_high) ? std::optional<double>(r.ratio_high)
                                                : std::nullopt;
}

std::string json_row(const DiffRow& r, bool op) {
  std::string out =
      fmt::format("{{\"module\": {}, \"name\": {}", json_string(r.module), json_string(r.name));
  if (op)
    out += fmt::format(
        ", \"new_name\": {}, \"matched_by\": {}, \"opcode\": {}, \"op_name\": {}, "
        "\"source\": {}, \"category\": {}",
        r.new_name.empty() ? std::string("null") : json_string(r.new_name),
        r.matched_by.empty() ? std::string("null") : json_string(r.matched_by),
        json_string(r.opcode), json_string(r.op_name), json_string(r.source),
        json_string(r.category));
  out += fmt::format(
      ", \"change\": \"{}\", \"significant\": {}, \"p_value\": {}, \"base_executions\": {}, "
      "\"new_executions\": {}, \"base_total_ns\": {}, \"new_total_ns\": {}, \"base_mean_ns\": {}, "
      "\"new_mean_ns\": {}, \"base_median_ns\": {}, \"new_median_ns\": {}, \"delta_ns\": {}, "
      "\"ratio\": {}, \"ratio_low\": {}, \"ratio_high\": {}, \"shift_ns\": {}, \"weight\": {}, "
      "\"contribution_ns\": {}, \"test\": {}, \"base_captures\": {}, \"new_captures\": {}",
      change_name(r.change), r.significant ? "true" : "false", opt(r.p_value), r.base_executions,
      r.new_executions, ps_to_ns_exact(r.base_total_ps), ps_to_ns_exact(r.new_total_ps),
      ps_to_ns(r.base_mean_ps), ps_to_ns(r.new_mean_ps), ps_to_ns(r.base_median_ps),
      ps_to_ns(r.new_median_ps), ps_to_ns(r.delta_ps),
      opt(r.ratio && std::isfinite(*r.ratio) ? r.ratio : std::nullopt), opt(low_bound(r)),
      opt(high_bound(r)), ps_to_ns(r.shift_ps), number(r.weight), ps_to_ns(r.contribution_ps),
      *r.test ? json_string(r.test) : std::string("null"), r.base_captures, r.new_captures);
  if (op) out += fmt::format(", \"cumulative_share\": {}", number(r.cumulative_share));
  return out + "}";
}

bool several(const DiffResult& r) { return r.base_captures + r.new_captures > 2; }

std::string json_rows(const std::vector<DiffRow>& rows, bool op) {
  std::string out = "[";
  for (size_t i = 0; i < rows.size(); ++i) out += (i ? ", " : "") + json_row(rows[i], op);
  return out + "]";
}

std::string json_contributions(const Contributions& c) {
  return fmt::format("\"slower_ns\": {}, \"faster_ns\": {}, \"net_ns\": {}", ps_to_ns(c.slower_ps),
                     ps_to_ns(c.faster_ps), ps_to_ns(c.net_ps()));
}

std::string json(const DiffResult& r) {
  std::string out = fmt::format(
      "{{\"test\": \"{}\", \"base_captures\": {}, \"new_captures\": {}, \"alpha\": {}, "
      "\"confidence\": {}, \"min_change\": {}, \"base_total_ns\": {}, \"new_total_ns\": {}, "
      "\"delta_ns\": {}, \"ops_change\": {{{}}}, \"explained\": {{\"top\": {}, {}, \"delta_ns\": "
      "{}, \"share\": {}}}",
      several(r) ? "capture-t" : "mann-whitney-u", r.base_captures, r.new_captures, number(r.alpha),
      number(1 - r.alpha), number(r.min_change), ps_to_ns(r.base_total_ps),
      ps_to_ns(r.new_total_ps), ps_to_ns(r.delta_ps), json_contributions(r.ops_change),
      r.explained_top, json_contributions(r.explained), ps_to_ns(r.explained.net_ps()),
      opt(r.explained_share));
  out += ", \"step\": " + (r.step ? json_row(*r.step, false) : std::string("null"));
  out +=
      ", \"step_unavailable\": " + (r.step ? std::string("null") : json_string(r.step_unavailable));
  out += ", \"modules\": " + json_rows(r.modules, false);
  out += ", \"ops\": " + json_rows(r.ops, true);
  out += ", \"categories\": " + json_rows(r.categories, false);
  out += ", \"warnings\": " + json_string_array(r.warnings);
  return out + "}\n";
}

std::string csv_number(const std::optional<double>& v) { return v ? number(*v) : ""; }

std::string csv(const DiffResult& r) {
  std::string out =
      "kind,module,name,new_name,matched_by,opcode,op_name,source,category,change,significant,"
      "p_value,base_executions,new_executions,base_mean_ns,new_mean_ns,base_median_ns,"
      "new_median_ns,delta_ns,ratio,ratio_low,ratio_high,shift_ns,weight,contribution_ns,test,"
      "base_captures,new_captures\n";
  auto rows = [&](const char* kind, const std::vector<DiffRow>& v) {
    for (const DiffRow& x : v)
      out += fmt::format(
          "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n",
          kind, csv_field(x.module), csv_field(x.name), csv_field(x.new_name), x.matched_by,
          csv_field(x.opcode), csv_field(x.op_name), csv_field(x.source), csv_field(x.category),
          change_name(x.change), x.significant ? "true" : "false",
          x.p_value ? number(*x.p_value) : "", x.base_executions, x.new_executions,
          ps_to_ns(x.base_mean_ps), ps_to_ns(x.new_mean_ps), ps_to_ns(x.base_median_ps),
          ps_to_ns(x.new_median_ps), ps_to_ns(x.delta_ps),
          csv_number(x.ratio && std::isfinite(*x.ratio) ? x.ratio : std::nullopt),
          csv_number(low_bound(x)), csv_number(high_bound(x)), ps_to_ns(x.shift_ps),
          number(x.weight), ps_to_ns(x.contribution_ps), x.test, x.base_captures, x.new_captures);
  };
  if (r.step) rows("step", {*r.step});
  rows("module", r.modules);
  rows("op", r.ops);
  rows("category", r.categories);
  return out;
}

std::string signed_duration(double ps) {
  return fmt::format("{}{}", ps > 0 ? "+" : "", human_duration(ps));
}

std::string interval_text(const DiffRow& r) {
  return r.ratio ? change_interval(r.ratio_low, r.ratio_high) : "";
}

std::string p_text(const DiffRow& r) {
  return r.p_value ? format_value(Measure::kNumber, *r.p_value) : "";
}
Cell p_cell(const DiffRow& r) { return r.p_value ? Cell(*r.p_value) : Cell::unknown(); }

// The columns every compared row shows: medians, the tested change and its interval, p, verdict.
std::vector<Cell> tested_cells(const DiffRow& x) {
  return {x.base_median_ps, x.new_median_ps, change_percent(x.ratio),
          interval_text(x), p_cell(x),       change_name(x.change)};
}

// The columns of tested_cells, after `leading`; then the contribution.
std::vector<TableColumn> tested_columns(std::vector<TableColumn> leading, const char* base,
                                        const char* fresh) {
  for (TableColumn c :
       std::initializer_list<TableColumn>{{base, Measure::kDuration},
                                          {fresh, Measure::kDuration},
                                          {"change", Measure::kLabel},
                                          {"interval", Measure::kLabel},
                                          {"p", Measure::kNumber},
                                          {"verdict"},
                                          {"contribution", Measure::kDuration, true}})
    leading.push_back(std::move(c));
  return leading;
}

std::string what_was_tested(const DiffResult& r) {
  std::string level = human_percent(1 - r.alpha);
  std::string how =
      several(r)
          ? fmt::format(
                "change: the ratio of the geometric means of the capture medians, {} interval "
                "and p from a two-sided Welch t-test over the log capture medians ({} vs {} "
                "captures)",
                level, r.base_captures, r.new_captures)
          : fmt::format(
                "change: the Hodges-Lehmann ratio (median of the pairwise NEW/BASE ratios of "
                "the runs), {} interval and p from the two-sided Mann-Whitney test",
                level);
  return fmt::format(
      "{}; slower/faster: p < {} and a change of at least {}; same: the interval lies within "
      "±{}; unclear: neither\n",
      how, number(r.alpha), human_percent(r.min_change), human_percent(r.min_change));
}

std::string contributions_text(const DiffResult& r) {
  if (r.ops.empty()) return "";
  const Contributions& c = r.ops_change;
  std::string out = fmt::format(
      "op contributions (change of the mean time per run x runs per device): slower ops {}, "
      "faster ops {}, net {} of the total change {}",
      signed_duration(c.slower_ps), signed_duration(c.faster_ps), signed_duration(c.net_ps()),
      signed_duration(r.delta_ps));
  if (r.explained_share)
    out +=
        fmt::format("; the top {} hold {} of the op time that moved ({} slower, {} faster)",
                    r.explained_top, human_percent(*r.explained_share),
                    signed_duration(r.explained.slower_ps), signed_duration(r.explained.faster_ps));
  return out + "\n";
}

std::string table(const DiffResult& r, size_t top) {
  if (r.modules.empty())
    return "no XLA module executions in either profile: nothing to compare (see jaxprof "
           "modules)\n";
  std::string out = fmt::format(
      "total (one BASE-sized run per device, means): {} -> {} ({}{})\n\n",
      human_duration(r.base_total_ps), human_duration(r.new_total_ps), signed_duration(r.delta_ps),
      r.base_total_ps > 0 ? fmt::format(", {:+.1f}%", (r.delta_ps / r.base_total_ps) * 100) : "");
  out += "step: " + step_text(r) + "\n\n";
  Table m(tested_columns({{"module"}, {"runs", Measure::kLabel}}, "base median", "new median"));
  for (const DiffRow& x : r.modules) {
    std::vector<Cell> row = {x.name, fmt::format("{}/{}", x.base_executions, x.new_executions)};
    for (Cell& c : tested_cells(x)) row.push_back(std::move(c));
    row.push_back(x.contribution_ps);
    m.add(std::move(row));
  }
  out += m.render(40) + "\n";
  std::vector<TableColumn> op_columns =
      tested_columns({{"op"}, {"module"}, {"category"}}, "base/run", "new/run");
  op_columns.push_back({"cum. share", Measure::kShare});
  Table t(std::move(op_columns));
  size_t shown = 0;
  for (const DiffRow& x : r.ops) {
    if (top && shown++ >= top) break;
    std::string name = x.new_name.empty() ? x.name : x.name + " -> " + x.new_name;
    std::vector<Cell> row = {name, x.module, x.category};
    for (Cell& c : tested_cells(x)) row.push_back(std::move(c));
    row.push_back(x.contribution_ps);
    row.push_back(r.explained_share ? Cell(x.cumulative_share) : Cell::unknown());
    t.add(std::move(row));
  }
  out += t.render(48);
  if (top && r.ops.size() > top)
    out += more_rows_line(top, r.ops.size(), "ops", "--rows 0 shows all");
  out += "\n";
  Table c(tested_columns({{"category"}, {"module"}}, "base/run", "new/run"));
  for (const DiffRow& x : r.categories) {
    std::vector<Cell> row = {x.name, x.module};
    for (Cell& cell : tested_cells(x)) row.push_back(std::move(cell));
    row.push_back(x.contribution_ps);
    c.add(std::move(row));
  }
  out += c.render(40);
  out += "\n" + contributions_text(r);
  out += "times per module run (steady state), medians; " + what_was_tested(r);
  out +=
      "cum. share: running sum of |contribution| over the sum for all ops (the op time that "
      "moved either way)\n";
  return out;
}

}  // namespace

std::string step_text(const DiffResult& r) {
  if (!r.step) return "none (" + r.step_unavailable + ")";
  const DiffRow& x = *r.step;
  return fmt::format(
      "{} steps, median {} -> {} per step ({}, interval {}, p = {}, {}; wall time of the marked "
      "steps, {}/{} steps, warm-up left out)",
      x.name, human_duration(x.base_median_ps), human_duration(x.new_median_ps),
      x.ratio ? change_percent(x.ratio) : std::string("from zero"), interval_text(x), p_text(x),
      change_name(x.change), x.base_executions, x.new_executions);
}

std::string render_diff(const DiffResult& result, OutputFormat format, size_t top) {
  switch (format) {
    case OutputFormat::kJson:
      return json(result);
    case OutputFormat::kCsv:
      return csv(result);
    case OutputFormat::kTable:
      return table(result, top);
  }
  return {};
}

}  // namespace jaxprof
