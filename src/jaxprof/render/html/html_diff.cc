#include "jaxprof/render/html/html_diff.h"

#include <fmt/format.h>

#include <cmath>

#include "jaxprof/render/text/change_text.h"
#include "jaxprof/render/text/diff_render.h"
#include "jaxprof/render/flame/flame_svg.h"
#include "jaxprof/render/html/html_charts.h"
#include "jaxprof/render/html/html_page.h"
#include "jaxprof/render/html/html_table.h"
#include "jaxprof/render/text/text.h"
#include "jaxprof/common/units.h"

namespace jaxprof {
namespace {

std::string h(std::string_view s) { return xml_escape(s); }

std::string none(std::string_view why) { return fmt::format("<p class=\"none\">{}</p>\n", h(why)); }

std::string signed_duration(double ps) {
  return fmt::format("{}{}", ps > 0 ? "+" : "", human_duration(ps));
}

std::string joined(const std::vector<std::string>& v) {
  std::string out;
  for (const std::string& s : v) out += (out.empty() ? "" : ", ") + s;
  return out.empty() ? "-" : out;
}

bool several(const DiffResult& r) { return r.base_captures + r.new_captures > 2; }

HtmlCell signed_cell(double ps) { return {signed_duration(ps), ps}; }

HtmlCell ratio_cell(const DiffRow& r) {
  if (!r.ratio) return text_cell("");
  return {change_percent(*r.ratio), std::isfinite(*r.ratio) ? *r.ratio : 1e300};
}

HtmlCell interval_cell(const DiffRow& r) {
  if (!r.ratio) return text_cell("");
  return {change_interval(r.ratio_low, r.ratio_high), r.ratio_low};
}

HtmlCell p_cell(const DiffRow& r) {
  if (!r.p_value) return text_cell("");
  return {format_value(Measure::kNumber, *r.p_value), *r.p_value};
}

std::string op_label(const DiffRow& r) {
  return r.new_name.empty() ? r.name : r.name + " -> " + r.new_name;
}

std::string summary_body(const DiffResult& r, const HtmlDiffOptions& o) {
  std::string out = "<dl class=\"kv\">\n";
  auto kv = [&](std::string_view k, const std::string& v) {
    out += fmt::format("<dt>{}</dt><dd>{}</dd>\n", h(k), h(v));
  };
  kv("BASE", joined(o.base));
  kv("NEW", joined(o.now));
  if (several(r)) kv("captures", fmt::format("{} vs {}", r.base_captures, r.new_captures));
  kv("total (one BASE-sized run per device)",
     fmt::format(
         "{} -> {} ({}{})", human_duration(r.base_total_ps), human_duration(r.new_total_ps),
         signed_duration(r.delta_ps),
         r.base_total_ps > 0 ? fmt::format(", {:+.1f}%", r.delta_ps / r.base_total_ps * 100) : ""));
  kv("step", step_text(r));
  const Contributions& c = r.ops_change;
  kv("op contributions (change of the mean time per run x runs per device)",
     fmt::format("slower ops {}, faster ops {}, net {} of the total change {}",
                 signed_duration(c.slower_ps), signed_duration(c.faster_ps),
                 signed_duration(c.net_ps()), signed_duration(r.delta_ps)));
  kv(fmt::format("the top {} op differences", r.explained_top),
     r.explained_share
         ? fmt::format("{} of the op time that moved ({} slower, {} faster)",
                       human_percent(*r.explained_share), signed_duration(r.explained.slower_ps),
                       signed_duration(r.explained.faster_ps))
         : std::string("- (no op changed its time)"));
  size_t counts[6] = {};
  for (const DiffRow& op : r.ops) ++counts[static_cast<int>(op.change)];
  kv("ops",
     fmt::format(
         "{} slower, {} faster, {} added, {} removed, {} unchanged, {} unclear",
         counts[static_cast<int>(Change::kSlower)], counts[static_cast<int>(Change::kFaster)],
         counts[static_cast<int>(Change::kAdded)], counts[static_cast<int>(Change::kRemoved)],
         counts[static_cast<int>(Change::kSame)], counts[static_cast<int>(Change::kUnclear)]));
  std::string level = human_percent(1 - r.alpha);
  kv("change",
     several(r) ? fmt::format("the ratio of the geometric means of the capture medians, with its "
                              "{} interval from the two-sided Welch t-test over the log capture "
                              "medians",
                              level)
                : fmt::format("the Hodges-Lehmann ratio (median of the pairwise NEW/BASE ratios "
                              "of the runs), with its {} interval from the two-sided "
                              "Mann-Whitney test",
                              level));
  kv("verdict",
     fmt::format("slower/faster: p < {} and a change of at least {}; same: the "
                 "interval lies within ±{}; unclear: neither",
                 number(r.alpha), human_percent(r.min_change), human_percent(r.min_change)));
  out += "</dl>\n";
  if (!r.warnings.empty()) {
    out += "<h3>Warnings</h3>\n<ul class=\"muted\">\n";
    for (const std::string& w : r.warnings) out += fmt::format("<li>{}</li>\n", h(w));
    out += "</ul>\n";
  }
  return out;
}

std::string chart_body(const DiffResult& r, size_t bars) {
  std::vector<SignedBar> v;
  for (const DiffRow& op : r.ops) {
    if (v.size() >= bars) break;
    if (op.contribution_ps == 0) continue;
    v.push_back(
        {op_label(op) + " (" + op.module + ")", op.contribution_ps,
         fmt::format("{}{}", change_name(op.change),
                     op.p_value ? ", p = " + format_value(Measure::kNumber, *op.p_value) : "")});
  }
  if (v.empty()) return none("No op changed its time: nothing to draw.");
  return "<p class=\"muted\">The ops whose change adds or removes the most device time per "
         "BASE-sized run (delta per module run x runs of the module per device); red is slower, "
         "green faster. Hover a bar for the verdict.</p>\n" +
         svg_signed_duration_bars(v);
}

void numbers(HtmlTable& t) {
  t.add_column("base median", true);
  t.add_column("new median", true);
  t.add_column("change", true);
  t.add_column("interval", true);
  t.add_column("p", true);
  t.add_column("verdict", false);
  t.add_column("contribution", true);
}

void add_numbers(std::vector<HtmlCell>& row, const DiffRow& r) {
  row.push_back(duration_cell(r.base_median_ps));
  row.push_back(duration_cell(r.new_median_ps));
  row.push_back(ratio_cell(r));
  row.push_back(interval_cell(r));
  row.push_back(p_cell(r));
  row.push_back(text_cell(change_name(r.change)));
  row.push_back(signed_cell(r.contribution_ps));
}

std::string modules_body(HtmlPageParts& page, const DiffResult& r) {
  if (r.modules.empty()) return none("No XLA module executions in either profile.");
  HtmlTable t;
  t.id = "modules-table";
  t.add_column("module", false);
  t.add_column("base runs", true);
  t.add_column("new runs", true);
  numbers(t);
  t.add_column("weight", true);
  for (const DiffRow& m : r.modules) {
    std::vector<HtmlCell> row = {text_cell(m.name),
                                 count_cell(static_cast<double>(m.base_executions)),
                                 count_cell(static_cast<double>(m.new_executions))};
    add_numbers(row, m);
    row.push_back(number_cell(m.weight));
    t.rows.push_back(std::move(row));
  }
  return "<p class=\"muted\">Times are medians per run of the module (steady state); change: the "
         "tested estimate of NEW/BASE and its interval; weight = runs per device in BASE; "
         "contribution = change of the mean run x weight. Click a header to sort.</p>\n" +
         page.table(t);
}

std::string ops_body(HtmlPageParts& page, const DiffResult& r, size_t rows) {
  if (r.ops.empty()) return none("No ops in either profile.");
  HtmlTable t;
  t.id = "ops-table";
  t.add_column("op", false);
  t.add_column("module", false);
  t.add_column("category", false);
  t.add_column("matched by", false);
  numbers(t);
  t.add_column("cum. share", true);
  t.add_column("JAX op", false);
  t.add_column("source", false);
  for (size_t i = 0; i < r.ops.size() && (rows == 0 || i < rows); ++i) {
    const DiffRow& op = r.ops[i];
    std::vector<HtmlCell> row = {text_cell(op_label(op)), text_cell(op.module),
                                 text_cell(op.category), text_cell(op.matched_by)};
    add_numbers(row, op);
    row.push_back(r.explained_share ? percent_cell(op.cumulative_share) : text_cell(""));
    row.push_back(text_cell(op.op_name));
    row.push_back(text_cell(op.source));
    t.rows.push_back(std::move(row));
  }
  std::string out =
      "<p class=\"muted\">Ops of the same module are paired by name, then by (opcode, JAX op, "
      "source line), then by (opcode, JAX op); <code>old -&gt; new</code> marks a renamed op. "
      "cum. share = running sum of |contribution| (in this order) / the sum over all ops: the "
      "share of the op time that moved either way.</p>\n" +
      page.table(t);
  if (rows && r.ops.size() > rows)
    out += fmt::format("<p class=\"muted\">{} more ops not shown.</p>\n", r.ops.size() - rows);
  return out;
}

std::string added_removed_body(HtmlPageParts& page, const DiffResult& r) {
  HtmlTable t;
  t.id = "added-removed-table";
  t.add_column("change", false);
  t.add_column("op", false);
  t.add_column("module", false);
  t.add_column("category", false);
  t.add_column("time/run", true);
  t.add_column("contribution", true);
  t.add_column("JAX op", false);
  t.add_column("source", false);
  for (const DiffRow& op : r.ops) {
    if (op.change != Change::kAdded && op.change != Change::kRemoved) continue;
    t.rows.push_back({text_cell(change_name(op.change)), text_cell(op.name), text_cell(op.module),
                      text_cell(op.category),
                      duration_cell(op.change == Change::kAdded ? op.new_mean_ps : op.base_mean_ps),
                      signed_cell(op.contribution_ps), text_cell(op.op_name),
                      text_cell(op.source)});
  }
  if (t.rows.empty()) return none("Every op of one side was matched to one of the other.");
  return "<p class=\"muted\">Ops only in NEW (added) or only in BASE (removed).</p>\n" +
         page.table(t);
}

std::string categories_body(HtmlPageParts& page, const DiffResult& r) {
  if (r.categories.empty()) return none("No op categories to compare.");
  HtmlTable t;
  t.id = "categories-table";
  t.add_column("category", false);
  t.add_column("module", false);
  numbers(t);
  for (const DiffRow& c : r.categories) {
    std::vector<HtmlCell> row = {text_cell(c.name), text_cell(c.module)};
    add_numbers(row, c);
    t.rows.push_back(std::move(row));
  }
  return page.table(t);
}

}  // namespace

std::string render_html_diff(const DiffResult& r, const HtmlDiffOptions& o) {
  HtmlPageParts page;
  std::string body;
  body += page.section("summary", "Summary", summary_body(r, o));
  body += page.section("top-changes", "Largest op changes", chart_body(r, o.bars));
  body += page.section("modules", "Modules", modules_body(page, r));
  body += page.section("ops", "Ops", ops_body(page, r, o.rows));
  body += page.section("added-removed", "Added and removed ops", added_removed_body(page, r));
  body += page.section("categories", "Categories per module", categories_body(page, r));
  HtmlPage p;
  p.title = o.title;
  p.subtitle = joined(o.base) + "  ->  " + joined(o.now);
  p.sections = page.sections;
  p.body = std::move(body);
  p.data_json = "{\"kind\":\"diff\",\"sections\":" + page.sections_json() +
                ",\"rows\":" + page.rows_json() + "}";
  return render_html_page(p);
}

}  // namespace jaxprof
