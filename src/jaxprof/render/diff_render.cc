#include "jaxprof/render/diff_render.h"

#include <fmt/format.h>

#include <cmath>

#include "jaxprof/render/units.h"

namespace jaxprof {

namespace {

std::string opt(const std::optional<double>& v) { return v ? number(*v) : "null"; }

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
      "\"ratio\": {}, \"shift_ns\": {}, \"weight\": {}, \"contribution_ns\": {}, \"test\": {}, "
      "\"base_captures\": {}, \"new_captures\": {}",
      change_name(r.change), r.significant ? "true" : "false", opt(r.p_value), r.base_executions,
      r.new_executions, ps_to_ns_exact(r.base_total_ps), ps_to_ns_exact(r.new_total_ps),
      ps_to_ns(r.base_mean_ps), ps_to_ns(r.new_mean_ps), ps_to_ns(r.base_median_ps),
      ps_to_ns(r.new_median_ps), ps_to_ns(r.delta_ps), opt(r.ratio), ps_to_ns(r.shift_ps),
      number(r.weight), ps_to_ns(r.contribution_ps),
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

std::string json(const DiffResult& r) {
  std::string out = fmt::format(
      "{{\"test\": \"{}\", \"base_captures\": {}, \"new_captures\": {}, \"alpha\": {}, "
      "\"min_change\": {}, \"base_total_ns\": {}, \"new_total_ns\": {}, \"delta_ns\": {}, "
      "\"explained\": {{\"top\": {}, \"delta_ns\": {}, \"share\": {}}}",
      several(r) ? "capture-t" : "mann-whitney-u", r.base_captures, r.new_captures, number(r.alpha),
      number(r.min_change), ps_to_ns(r.base_total_ps), ps_to_ns(r.new_total_ps),
      ps_to_ns(r.delta_ps), r.explained_top, ps_to_ns(r.explained_ps), opt(r.explained_share));
  out += ", \"step\": " + (r.step ? json_row(*r.step, false) : std::string("null"));
  out +=
      ", \"step_unavailable\": " + (r.step ? std::string("null") : json_string(r.step_unavailable));
  out += ", \"modules\": " + json_rows(r.modules, false);
  out += ", \"ops\": " + json_rows(r.ops, true);
  out += ", \"categories\": " + json_rows(r.categories, false);
  out += ", \"warnings\": [";
  for (size_t i = 0; i < r.warnings.size(); ++i)
    out += (i ? ", " : "") + json_string(r.warnings[i]);
  return out + "]}\n";
}

std::string csv(const DiffResult& r) {
  std::string out =
      "kind,module,name,new_name,matched_by,opcode,op_name,source,category,change,significant,"
      "p_value,base_executions,new_executions,base_mean_ns,new_mean_ns,base_median_ns,"
      "new_median_ns,delta_ns,ratio,shift_ns,weight,contribution_ns,test,base_captures,"
      "new_captures\n";
  auto rows = [&](const char* kind, const std::vector<DiffRow>& v) {
    for (const DiffRow& x : v)
      out += fmt::format(
          "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", kind,
          csv_field(x.module), csv_field(x.name), csv_field(x.new_name), x.matched_by,
          csv_field(x.opcode), csv_field(x.op_name), csv_field(x.source), csv_field(x.category),
          change_name(x.change), x.significant ? "true" : "false",
          x.p_value ? number(*x.p_value) : "", x.base_executions, x.new_executions,
          ps_to_ns(x.base_mean_ps), ps_to_ns(x.new_mean_ps), ps_to_ns(x.base_median_ps),
          ps_to_ns(x.new_median_ps), ps_to_ns(x.delta_ps), x.ratio ? number(*x.ratio) : "",
          ps_to_ns(x.shift_ps), number(x.weight), ps_to_ns(x.contribution_ps), x.test,
          x.base_captures, x.new_captures);
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

std::string ratio_text(const DiffRow& r) {
  return r.ratio ? fmt::format("{:+.1f}%", (*r.ratio - 1) * 100) : "";
}

std::string p_text(const DiffRow& r) { return r.p_value ? fmt::format("{:.2g}", *r.p_value) : ""; }
Cell p_cell(const DiffRow& r) { return r.p_value ? Cell(*r.p_value) : Cell::unknown(); }

std::string table(const DiffResult& r, size_t top) {
  if (r.modules.empty())
    return "no XLA module executions in either profile: nothing to compare (see jaxprof "
           "modules)\n";
  std::string out = fmt::format(
      "total (one BASE-sized run per device): {} -> {} ({}{})\n\n", human_duration(r.base_total_ps),
      human_duration(r.new_total_ps), signed_duration(r.delta_ps),
      r.base_total_ps > 0 ? fmt::format(", {:+.1f}%", (r.delta_ps / r.base_total_ps) * 100) : "");
  out += "step: " + step_text(r) + "\n\n";
  Table m({{"module"},
           {"runs", Measure::kLabel},
           {"base mean", Measure::kDuration},
           {"new mean", Measure::kDuration},
           {"delta", Measure::kDuration, true},
           {"change", Measure::kLabel},
           {"p", Measure::kNumber},
           {"verdict"}});
  for (const DiffRow& x : r.modules)
    m.add({x.name, fmt::format("{}/{}", x.base_executions, x.new_executions), x.base_mean_ps,
           x.new_mean_ps, x.delta_ps, ratio_text(x), p_cell(x), change_name(x.change)});
  out += m.render(40) + "\n";
  Table t({{"op"},
           {"module"},
           {"category"},
           {"base/run", Measure::kDuration},
           {"new/run", Measure::kDuration},
           {"delta", Measure::kDuration, true},
           {"change", Measure::kLabel},
           {"p", Measure::kNumber},
           {"verdict"},
           {"cum. share", Measure::kShare}});
  size_t shown = 0;
  for (const DiffRow& x : r.ops) {
    if (top && shown++ >= top) break;
    std::string name = x.new_name.empty() ? x.name : x.name + " -> " + x.new_name;
    t.add({name, x.module, x.category, x.base_mean_ps, x.new_mean_ps, x.delta_ps, ratio_text(x),
           p_cell(x), change_name(x.change),
           r.explained_share ? Cell(x.cumulative_share) : Cell::unknown()});
  }
  out += t.render(48);
  if (top && r.ops.size() > top)
    out += more_rows_line(top, r.ops.size(), "ops", "--rows 0 shows all");
  out += "\n";
  Table c({{"category"},
           {"module"},
           {"base/run", Measure::kDuration},
           {"new/run", Measure::kDuration},
           {"delta", Measure::kDuration, true},
           {"change", Measure::kLabel},
           {"p", Measure::kNumber},
           {"verdict"}});
  for (const DiffRow& x : r.categories)
    c.add({x.name, x.module, x.base_mean_ps, x.new_mean_ps, x.delta_ps, ratio_text(x), p_cell(x),
           change_name(x.change)});
  out += c.render(40);
  if (r.explained_share)
    out += fmt::format("\nthe top {} op differences explain {} of the total change\n",
                       r.explained_top, human_percent(*r.explained_share));
  out += fmt::format(
      "times per module run (steady state); slower/faster: {} p < {} and a change of at least "
      "{}\n",
      several(r) ? fmt::format("over {} vs {} captures, two-sided Welch t-test of the capture "
                               "medians",
                               r.base_captures, r.new_captures)
                 : std::string("two-sided Mann-Whitney"),
      number(r.alpha), human_percent(r.min_change));
  return out;
}

}  // namespace

std::string step_text(const DiffResult& r) {
  if (!r.step) return "none (" + r.step_unavailable + ")";
  const DiffRow& x = *r.step;
  return fmt::format(
      "{} steps, {} -> {} per step ({}, p = {}, {}; wall time of the marked steps, means over "
      "{}/{} "
      "steps, warm-up left out)",
      x.name, human_duration(x.base_mean_ps), human_duration(x.new_mean_ps),
      x.ratio ? ratio_text(x) : std::string("from zero"), p_text(x), change_name(x.change),
      x.base_executions, x.new_executions);
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
