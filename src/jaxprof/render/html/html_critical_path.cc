#include "jaxprof/render/html/html_critical_path.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "jaxprof/analysis/critical_path/critical_path_digest.h"
#include "jaxprof/common/units.h"
#include "jaxprof/render/flame/flame_svg.h"
#include "jaxprof/render/html/html_charts.h"
#include "jaxprof/render/html/html_table.h"
#include "jaxprof/render/text/text.h"

namespace jaxprof {

namespace {

constexpr size_t kMaxSteps = 64;  // bars drawn

std::string h(std::string_view s) { return xml_escape(s); }

std::string none(std::string_view why) { return fmt::format("<p class=\"none\">{}</p>\n", h(why)); }

double share_of(int64_t part, int64_t whole) {
  return whole > 0 ? static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

// Colours by category, in the order categories first appear (largest first in each step).
const char* kColors[] = {"#4e79a7", "#e15759", "#59a14f", "#edc948", "#b07aa1",
                         "#76b7b2", "#ff9da7", "#9c755f", "#f28e2b", "#d0d0d0"};

std::string category_bars(const CriticalPathResult& r) {
  std::vector<std::string> categories;
  for (const CriticalStep& s : r.steps)
    for (const auto& [c, _] : s.critical_ps)
      if (std::find(categories.begin(), categories.end(), c) == categories.end())
        categories.push_back(c);
  std::vector<ChartLegend> legend;
  for (size_t i = 0; i < categories.size(); ++i)
    legend.push_back({categories[i], kColors[i % std::size(kColors)]});
  std::vector<StackedBar> bars;
  for (size_t i = 0; i < r.steps.size() && i < kMaxSteps; ++i) {
    const CriticalStep& s = r.steps[i];
    StackedBar bar{fmt::format("step {}", s.number),
                   human_duration(static_cast<double>(s.step_ps)) + (s.warmup ? " (warm-up)" : ""),
                   std::vector<double>(categories.size(), 0.0)};
    for (const auto& [c, t] : s.critical_ps)
      bar.values[std::find(categories.begin(), categories.end(), c) - categories.begin()] =
          static_cast<double>(t);
    bars.push_back(std::move(bar));
  }
  std::string out = svg_stacked_bars(bars, legend);
  if (r.steps.size() > kMaxSteps)
    out += fmt::format("<p class=\"muted\">{} more steps not drawn.</p>\n",
                       r.steps.size() - kMaxSteps);
  return out;
}

std::string ops_table(HtmlPageParts& parts, const CriticalStep& s, size_t top) {
  HtmlTable t;
  t.id = "critical-path-ops-table";
  t.filterable = true;
  t.add_column("op", false);
  t.add_column("category", false);
  t.add_column("count", true);
  t.add_column("total", true);
  t.add_column("on path", true);
  t.add_column("share of step", true);
  t.add_column("slack", true);
  for (size_t i = 0; i < s.ops.size() && i < top; ++i) {
    const PathOp& o = s.ops[i];
    t.row_data.push_back({{"op", o.name}});
    t.rows.push_back({name_cell(o.name), text_cell(o.category),
                      count_cell(static_cast<double>(o.count)),
                      duration_cell(static_cast<double>(o.total_ps)),
                      duration_cell(static_cast<double>(o.on_path_ps)),
                      percent_cell(share_of(o.on_path_ps, s.step_ps)),
                      duration_cell(static_cast<double>(o.slack_ps))});
  }
  return parts.table(t);
}

// With several hosts: per host, the collectives it held over the steps, then each collective.
std::string held_tables(HtmlPageParts& parts, const CriticalPathResult& r, size_t top) {
  struct HostHeld {
    uint64_t count = 0;
    int64_t wait_ps = 0;
  };
  std::map<std::string, HostHeld> by_host;
  size_t instances = 0;
  // The windows of one step on several hosts drift apart, so merged steps can overlap and hold
  // the same instance: it counts once, in the first step that holds it.
  std::set<std::tuple<std::string, int64_t, std::string>> seen;
  auto first_time = [&](const HeldCollective& c) {
    return c.hosts > 1 && seen.emplace(c.name, c.arrival_ps, c.device).second;
  };
  for (const CriticalStep& s : r.steps)
    for (const HeldCollective& c : s.collectives)
      if (first_time(c)) {
        HostHeld& held = by_host[c.host];
        ++held.count;
        held.wait_ps += c.spread_ps;
        ++instances;
      }
  if (instances == 0) return {};
  std::vector<std::pair<std::string, HostHeld>> hosts(by_host.begin(), by_host.end());
  std::stable_sort(hosts.begin(), hosts.end(), [](const auto& a, const auto& b) {
    return a.second.count != b.second.count ? a.second.count > b.second.count
                                            : a.second.wait_ps > b.second.wait_ps;
  });
  std::string out =
      "<h3>Which host held each collective</h3>\n<p class=\"muted\">A collective ends for every "
      "participant a fixed time after the last one arrives: that last host held the others. "
      "<em>After</em> is what it waited for before it could start (the op before it on its "
      "device, or the host event that launched it); <em>others waited</em> runs from the first "
      "arrival to the last.</p>\n";
  HtmlTable per_host;
  per_host.id = "critical-path-hosts-table";
  per_host.add_column("host", false);
  per_host.add_column("collectives held", true);
  per_host.add_column("others waited", true);
  for (const auto& [host, held] : hosts)
    per_host.rows.push_back({name_cell(host), count_cell(static_cast<double>(held.count)),
                             duration_cell(static_cast<double>(held.wait_ps))});
  out += parts.table(per_host);
  HtmlTable each;
  each.id = "critical-path-held-table";
  each.filterable = true;
  each.add_column("step", true);
  each.add_column("collective", false);
  each.add_column("participants", true);
  each.add_column("held by host", false);
  each.add_column("device", false);
  each.add_column("after", false);
  each.add_column("others waited", true);
  size_t shown = 0;
  seen.clear();
  for (const CriticalStep& s : r.steps)
    for (const HeldCollective& c : s.collectives) {
      if (!first_time(c) || shown == top) continue;
      ++shown;
      each.row_data.push_back({{"step", std::to_string(s.number)}, {"host", c.host}});
      each.rows.push_back({count_cell(static_cast<double>(s.number)), name_cell(c.name),
                           count_cell(static_cast<double>(c.participants)), name_cell(c.host),
                           name_cell(c.device), name_cell(c.after),
                           duration_cell(static_cast<double>(c.spread_ps))});
    }
  out += parts.table(each);
  if (shown < instances)
    out += fmt::format(
        "<p class=\"muted\">{} more collectives (<code>jaxprof critical-path "
        "--format json</code> lists them all).</p>\n",
        instances - shown);
  return out;
}

}  // namespace

std::string html_critical_path_body(HtmlPageParts& parts, const CriticalPathResult& r, size_t top) {
  const CriticalPathDigest d = digest_critical_path(r, SIZE_MAX);
  if (!d.available()) return none("No critical path: " + d.unavailable + ".");
  const CriticalStep& s = d.step;
  std::string out = fmt::format(
      "<p class=\"muted\">Each step's critical path (<code>jaxprof critical-path</code>): the "
      "chain of ops, collectives, host work and gaps that set its end, by category; its parts add "
      "up to the step time. Steps: {}.</p>\n",
      h(r.step_source));
  out += category_bars(r);
  out += fmt::format(
      "<h3>Ops on the path of the median {}step</h3>\n<p class=\"muted\">Step {} ({}; the "
      "median of {} {}, {}): the ops with most time on its path, summed over devices. Slack: how "
      "much later the op could have ended without moving the step's end (the least over its "
      "events).</p>\n",
      s.warmup ? "" : "steady ", s.number, h(s.name), d.counted,
      s.warmup ? "steps" : "steady steps", human_duration(static_cast<double>(s.step_ps)));
  out += ops_table(parts, s, top);
  return out + held_tables(parts, r, top);
}

}  // namespace jaxprof
