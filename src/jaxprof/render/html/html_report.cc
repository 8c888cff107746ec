#include "jaxprof/render/html/html_report.h"

#include <fmt/format.h>

#include <algorithm>

#include "jaxprof/analysis/collectives/collectives.h"
#include "jaxprof/analysis/compile/compile.h"
#include "jaxprof/analysis/cost/roofline.h"
#include "jaxprof/analysis/flame/flame.h"
#include "jaxprof/analysis/flame/flame_merge.h"
#include "jaxprof/analysis/ops/kernels.h"
#include "jaxprof/analysis/steps/modules.h"
#include "jaxprof/analysis/summary/summary.h"
#include "jaxprof/analysis/timeline/timeline.h"
#include "jaxprof/common/units.h"
#include "jaxprof/render/flame/flame_svg.h"
#include "jaxprof/render/html/html_charts.h"
#include "jaxprof/render/html/html_critical_path.h"
#include "jaxprof/render/html/html_memory.h"
#include "jaxprof/render/html/html_page.h"
#include "jaxprof/render/html/html_report_data.h"
#include "jaxprof/render/html/html_report_hosts.h"
#include "jaxprof/render/html/html_report_ops.h"
#include "jaxprof/render/html/html_report_steps.h"
#include "jaxprof/render/html/html_scatter.h"
#include "jaxprof/render/html/html_short_text.h"
#include "jaxprof/render/html/html_table.h"
#include "jaxprof/render/html/roofline_html.h"
#include "jaxprof/render/text/steady_state_render.h"
#include "jaxprof/render/text/text.h"

namespace jaxprof {
namespace {

constexpr size_t kMaxBars = 64;  // devices drawn in the breakdown

std::string h(std::string_view s) { return xml_escape(s); }

std::string none(std::string_view why) { return fmt::format("<p class=\"none\">{}</p>\n", h(why)); }

// Everything the page's script reads, collected while sections are written.
struct PageData : HtmlPageParts {
  std::vector<std::string> hosts;
  std::string step;         // the step module, "" when there is none
  std::string step_source;  // what the step plot shows: "annotation", "module" or ""
};

std::string section(PageData& data, std::string_view id, std::string_view title,
                    const std::string& body) {
  return data.section(id, title, body);
}

std::string table(PageData& data, const HtmlTable& t) { return data.table(t); }

std::string summary_body(const SummaryResult& s, const std::string& source) {
  const SummaryDeviceTime& d = s.device;
  std::string out = "<dl class=\"kv\">\n";
  auto kv = [&](std::string_view k, const std::string& v) {
    out += fmt::format("<dt>{}</dt><dd>{}</dd>\n", h(k), h(v));
  };
  kv("profile", source);
  std::string hosts;
  for (const std::string& host : s.hosts) {
    if (!hosts.empty()) hosts += ", ";
    hosts += host;
  }
  kv("hosts", hosts.empty() ? "-" : hosts);
  kv("devices", fmt::format("{}", d.devices));
  kv("module executions", fmt::format("{}", d.executions));
  if (std::string line = render_set_apart_line(s.set_apart); !line.empty()) kv("not counted", line);
  if (d.span_ps > 0) {
    double span = static_cast<double>(d.span_ps);
    kv("device time (sum of spans)", human_duration(span));
    // The shares are `jaxprof summary`'s: of the steady device time, as idle's.
    kv("compute", fmt::format("{} ({})", human_duration(static_cast<double>(d.compute_ps)),
                              human_percent(d.compute_share)));
    kv("exposed communication",
       fmt::format("{} ({})", human_duration(static_cast<double>(d.comm_exposed_ps)),
                   human_percent(d.comm_exposed_share)));
    kv("exposed memcpy",
       fmt::format("{} ({})", human_duration(static_cast<double>(d.memcpy_exposed_ps)),
                   human_percent(d.memcpy_exposed_share)));
    kv("idle",
       fmt::format("{} ({}; in modules {}, between modules {})",
                   human_duration(static_cast<double>(d.idle_ps)), human_percent(d.idle_share),
                   human_duration(static_cast<double>(d.idle_in_modules_ps)),
                   human_duration(static_cast<double>(d.idle_between_modules_ps))));
  }
  if (s.compile.compiles > 0)
    kv("compile", fmt::format("{} compiles, {} wall", s.compile.compiles,
                              human_duration(static_cast<double>(s.compile.wall_ps))));
  out += "</dl>\n";
  if (d.span_ps == 0) out += none("No device op events in this profile: no device time to show.");
  out += "<h3>Observations</h3>\n";
  if (s.observations.empty()) {
    out += none("No observations: nothing stood out by the rules in docs/summary.md.");
  } else {
    out += "<ul class=\"obs\">\n";
    for (const Observation& o : s.observations)
      out += fmt::format("<li><code>{}</code> {}</li>\n", h(o.rule), h(o.text));
    out += "</ul>\n";
  }
  if (!s.warnings.empty()) {
    out += "<h3>Warnings</h3>\n<ul class=\"muted\">\n";
    for (const std::string& w : s.warnings) out += fmt::format("<li>{}</li>\n", h(w));
    out += "</ul>\n";
  }
  return out;
}

std::string device_time_body(const TimelineResult& t) {
  if (t.devices.empty()) return none("No device op events: nothing to break down.");
  std::vector<ChartLegend> legend = {{"compute", "#4e79a7"},
                                     {"exposed communication", "#e15759"},
                                     {"exposed memcpy", "#edc948"},
                                     {"idle", "#d0d0d0"}};
  std::vector<StackedBar> bars;
  for (size_t i = 0; i < t.devices.size() && i < kMaxBars; ++i) {
    const DeviceTimeline& d = t.devices[i];
    bars.push_back({d.device,
                    "span " + human_duration(static_cast<double>(d.span_ps)),
                    {static_cast<double>(d.compute_ps), static_cast<double>(d.comm_exposed_ps),
                     static_cast<double>(d.memcpy_exposed_ps), static_cast<double>(d.idle_ps)}});
  }
  std::string out =
      "<p class=\"muted\">Each bar is one device's span (first op start to last op end), split "
      "exactly: compute, communication not hidden behind compute, copies hidden by neither, idle. "
      "Hover a part for its time.</p>\n";
  out += svg_stacked_bars(bars, legend);
  if (t.devices.size() > kMaxBars)
    out += fmt::format("<p class=\"muted\">{} more devices not drawn.</p>\n",
                       t.devices.size() - kMaxBars);
  return out;
}

std::string modules_body(PageData& data, const ModulesResult& m, size_t top) {
  if (m.modules.empty()) return none("No XLA module executions found in this profile.");
  HtmlTable t;
  t.id = "modules-table";
  t.add_column("module", false);
  t.add_column("executions", true);
  t.add_column("warm-up", true);
  t.add_column("mean", true);
  t.add_column("std", true);
  t.add_column("min", true);
  t.add_column("max", true);
  t.add_column("total", true);
  t.add_column("share", true);
  t.add_column("devices", true);
  t.filterable = true;
  for (size_t i = 0; i < m.modules.size() && i < top; ++i) {
    const ModuleStats& s = m.modules[i];
    t.row_data.push_back({{"module", s.name}});
    t.rows.push_back({module_cell(s.name), count_cell(static_cast<double>(s.executions)),
                      count_cell(static_cast<double>(s.warmup_executions)),
                      duration_cell(s.mean_ps), duration_cell(s.std_ps),
                      duration_cell(static_cast<double>(s.min_ps)),
                      duration_cell(static_cast<double>(s.max_ps)),
                      duration_cell(static_cast<double>(s.total_ps)), percent_cell(s.share),
                      count_cell(static_cast<double>(s.devices))});
  }
  return "<p class=\"muted\">Mean, std, min and max are over steady-state executions (warm-up runs "
         "apart). Click a header to sort, a module for its ops and source lines.</p>\n" +
         table(data, t);
}

// `merged`: report_flame's.
std::string flame_body(const FlameTree& merged, const std::string& title) {
  if (merged.devices.empty()) return none("No device op events: no flamegraph.");
  const size_t n = merged.devices.size();
  FlameSvgOptions o;
  o.title = title;
  o.min_fraction = 1e-4;  // bounds the page for huge trees
  o.fluid = true;
  std::string svg = render_flame_svg(merged, o);
  // The XML declaration has no place inside an HTML document.
  if (svg.starts_with("<?xml")) svg.erase(0, svg.find('\n') + 1);
  return fmt::format(
             "<p class=\"muted\">Device busy time{}; idle time is left out (the device-time "
             "section shows it). Click a frame to zoom into it, the bottom frame to zoom out; "
             "type a regular expression to highlight the frames it matches.</p>\n",
             n > 1 ? fmt::format(", summed over the {} devices (<code>jaxprof flame</code> draws "
                                 "each device apart)",
                                 n)
                   : "") +
         "<div class=\"flame-tools\"><input type=\"search\" class=\"flame-search\" "
         "placeholder=\"highlight: regular expression\" aria-label=\"highlight frames\"> "
         "<button type=\"button\" class=\"flame-reset\">reset zoom</button> "
         "<span class=\"muted flame-match\"></span></div>\n"
         "<div class=\"flame\">\n" +
         svg + "</div>\n";
}

std::string collectives_body(PageData& data, const CollectivesResult& c, size_t top) {
  if (c.ops.empty()) return none("No collectives in this profile.");
  std::string out =
      fmt::format("<p class=\"muted\">Bandwidth convention: {}.</p>\n", h(c.convention));
  std::vector<ScatterPoint> points;
  for (const CollectiveOp& op : c.ops)
    if (op.message_bytes > 0 && op.busbw_gbps > 0)
      points.push_back({static_cast<double>(op.message_bytes), op.busbw_gbps, op.opcode,
                        fmt::format("{} ({}, N={}): {}, {}", op.name, op.opcode, op.group_size,
                                    human_bytes(static_cast<double>(op.message_bytes)),
                                    human_bandwidth(op.busbw_gbps))});
  if (points.empty())
    out += none("Message sizes are unknown (the profile carries no HLO): no bandwidth plot.");
  else
    out += svg_scatter(points, {"message size", AxisQuantity::kBytes},
                       {"bus bandwidth", AxisQuantity::kBandwidth});
  HtmlTable t;
  t.id = "collectives-table";
  t.filterable = true;
  t.add_column("op", false);
  t.add_column("module", false);
  t.add_column("opcode", false);
  t.add_column("N", true);
  t.add_column("message size", true);
  t.add_column("count", true);
  t.add_column("total", true);
  t.add_column("exposed", true);
  t.add_column("hidden", true);
  t.add_column("busbw", true);
  t.add_column("wait", true);
  for (size_t i = 0; i < c.ops.size() && i < top; ++i) {
    const CollectiveOp& op = c.ops[i];
    HtmlDrill to_op;
    to_op.targets = kOpsTable;
    to_op.scope = {{"module", op.module}, {"op", op.name}};
    t.rows.push_back(
        {name_cell(op.name, std::move(to_op)), module_cell(op.module), name_cell(op.opcode),
         count_cell(static_cast<double>(op.group_size)),
         bytes_cell(op.message_bytes ? std::optional<double>(op.message_bytes) : std::nullopt),
         count_cell(static_cast<double>(op.count)), duration_cell(static_cast<double>(op.total_ps)),
         duration_cell(static_cast<double>(op.exposed_ps)),
         duration_cell(static_cast<double>(op.hidden_ps)),
         bandwidth_cell(op.message_bytes ? std::optional<double>(op.busbw_gbps) : std::nullopt),
         duration_cell(static_cast<double>(op.wait_total_ps))});
  }
  return out + table(data, t);
}

std::string kernels_body(PageData& data, const KernelsResult& k, size_t top) {
  if (k.kernels.empty())
    return none(k.no_gpu_reason.empty() ? "No GPU kernels in this profile." : k.no_gpu_reason);
  HtmlTable t;
  t.id = "kernels-table";
  t.filterable = true;
  t.add_column("kernel", false);
  t.add_column("count", true);
  t.add_column("total", true);
  t.add_column("mean", true);
  t.add_column("min", true);
  t.add_column("max", true);
  t.add_column("share", true);
  t.add_column("HLO op", false);
  t.add_column("JAX op", false);
  t.add_column("launch", false);
  for (size_t i = 0; i < k.kernels.size() && i < top; ++i) {
    const KernelGroup& g = k.kernels[i];
    double share =
        k.total_ps > 0 ? static_cast<double>(g.total_ps) / static_cast<double>(k.total_ps) : 0.0;
    HtmlDrill detail;
    detail.detail = true;
    HtmlDrill to_op;
    if (!g.hlo_op.empty()) {
      to_op.targets = kOpsTable;
      to_op.scope = {{"op", g.hlo_op}};
    }
    t.rows.push_back(
        {long_cell(g.name, g.name, std::move(detail)), count_cell(static_cast<double>(g.count)),
         duration_cell(static_cast<double>(g.total_ps)), duration_cell(g.mean_ps),
         duration_cell(static_cast<double>(g.min_ps)), duration_cell(static_cast<double>(g.max_ps)),
         percent_cell(share), name_cell(g.hlo_op, std::move(to_op)),
         long_cell(short_op_path(g.op_name), g.op_name),
         text_cell(g.configs.empty() ? "" : g.configs.front().details)});
  }
  return fmt::format("<p class=\"muted\">{} kernel events on {} GPUs, {} in all.</p>\n",
                     k.kernel_events, k.devices.size(),
                     human_duration(static_cast<double>(k.total_ps))) +
         table(data, t);
}

std::string compile_body(PageData& data, const CompileResult& c) {
  std::string out;
  if (c.compiles.empty()) {
    out += none("No compile events in this profile.");
  } else {
    std::vector<ChartLegend> legend;
    StackedBar bar{"all compiles", human_duration(static_cast<double>(c.wall_ps)) + " wall", {}};
    const char* colors[] = {"#76b7b2", "#59a14f", "#4e79a7", "#b07aa1", "#9c755f", "#d0d0d0"};
    for (const CompilePhaseTime& p : c.phases) {
      legend.push_back({compile_phase_name(p.phase), colors[static_cast<int>(p.phase) % 6]});
      bar.values.push_back(static_cast<double>(p.wall_ps));
    }
    out += svg_stacked_bars({bar}, legend);
    HtmlTable t;
    t.id = "compile-table";
    t.add_column("module", false);
    t.add_column("compiles", true);
    t.add_column("wall", true);
    for (const CompilePhaseTime& p : c.phases) t.add_column(compile_phase_name(p.phase), true);
    for (const ModuleCompile& m : c.modules) {
      std::vector<HtmlCell> row = {text_cell(m.module.empty() ? "(unknown)" : m.module),
                                   count_cell(static_cast<double>(m.compiles)),
                                   duration_cell(static_cast<double>(m.wall_ps))};
      for (const CompilePhaseTime& p : m.phases)
        row.push_back(duration_cell(static_cast<double>(p.wall_ps)));
      t.rows.push_back(std::move(row));
    }
    out += table(data, t);
  }
  for (const std::string& n : c.notes) out += fmt::format("<p class=\"muted\">{}</p>\n", h(n));
  return out;
}

std::string page_data_json(const PageData& d, const HtmlReportOptions& o) {
  std::string j = "{\"source\":" + json_string(o.source) + ",\"sections\":" + d.sections_json();
  j += ",\"hosts\":[";
  for (size_t i = 0; i < d.hosts.size(); ++i) {
    if (i > 0) j += ',';
    j += json_string(d.hosts[i]);
  }
  j += "],\"step\":" + json_string(d.step) + ",\"step_source\":" + json_string(d.step_source) +
       ",\"rows\":" + d.rows_json() + "}";
  return j;
}

}  // namespace

std::string report_flame_root(const FlameTree& tree) {
  const size_t n = tree.devices.size();
  return n == 1 ? tree.devices.front().device : fmt::format("all {} devices", n);
}

FlameTree report_flame(const FlameTree& tree) {
  // One tree for all devices: each device's frame would otherwise get 1/n of the width.
  if (tree.devices.empty()) return tree;
  return merge_flame_devices(tree, report_flame_root(tree));
}

std::string render_html_report(const Profile& profile, const HtmlReportOptions& o) {
  HtmlReportData d;
  SummaryOptions so;
  so.top = SIZE_MAX;  // every op: the ops and source-lines tables pick their rows
  so.observations = 10;
  so.steady = o.steady;
  d.summary = compute_summary(profile, so);
  d.timeline = compute_timeline(profile, o.steady);
  d.modules = compute_modules(profile, {.steady = o.steady});
  d.steps = compute_steps(profile);
  d.step_runs = step_runs(profile);
  for (const StepDeviceRuns& r : d.step_runs) d.step_devices += r.runs.empty() ? 0 : 1;
  FlameOptions fs;
  fs.steady = o.steady;
  fs.idle = false;  // idle is often most of a span: the device-time section shows it
  fs.by = FlameBy::kSource;
  d.flame_source = report_flame(compute_flame(profile, fs));
  fs.by = FlameBy::kOpName;
  d.flame_op = report_flame(compute_flame(profile, fs));
  d.collectives = compute_collectives(profile, {.steady = o.steady});
  d.kernels = compute_kernels(profile, {.steady = o.steady});
  d.compile = compute_compile(profile);
  html_report_event_sections(profile, d);
  return render_html_report(d, o);
}

std::string render_html_report(const HtmlReportData& d, const HtmlReportOptions& o) {
  const SummaryResult& summary = d.summary;
  const ModulesResult& modules = d.modules;
  PageData data;
  data.hosts = summary.hosts;
  std::string body;
  body += section(data, "summary", "Summary", summary_body(summary, o.source));
  body += section(data, "device-time", "Device time per device", device_time_body(d.timeline));
  {
    StepsSectionInfo steps;
    body += section(
        data, "steps", "Step time",
        html_steps_body(data, d.steps, d.step_runs, modules, summary.hosts, d.step_devices, steps));
    data.step = steps.step;
    data.step_source = steps.source;
  }
  body += section(data, "critical-path", "Critical path",
                  d.critical_path ? html_critical_path_body(data, *d.critical_path, o.top)
                                  : none(d.missing_critical_path));
  body += section(data, "modules", "Top modules", modules_body(data, modules, o.top));
  std::vector<std::string> listed_modules;
  for (size_t i = 0; i < modules.modules.size() && i < o.top; ++i)
    listed_modules.push_back(modules.modules[i].name);
  body += section(data, "ops", "Top ops", html_ops_body(data, summary.ops, listed_modules, o.top));
  body += section(data, "sources", "Source lines",
                  html_sources_body(data, summary.ops, listed_modules, o.top));
  body += section(data, "flame-source", "Flamegraph by source line",
                  flame_body(d.flame_source, "device time by source line"));
  body += section(data, "flame-op-name", "Flamegraph by JAX op path",
                  flame_body(d.flame_op, "device time by JAX op path"));
  if (d.roofline) {
    RooflineHtml roofline = roofline_html(*d.roofline, o.top);
    body += section(data, "roofline", "Roofline",
                    roofline.empty ? none("No device op events: no roofline.")
                                   : roofline.charts + table(data, roofline.table));
  } else {
    body += section(data, "roofline", "Roofline", none(d.missing_roofline));
  }
  body += section(data, "collectives", "Collectives", collectives_body(data, d.collectives, o.top));
  body += section(data, "kernels", "GPU kernels", kernels_body(data, d.kernels, o.top));
  body += section(data, "compile", "Compile phases", compile_body(data, d.compile));
  body += section(data, "memory", "Memory",
                  d.memory ? html_memory_body(data, *d.memory, o.top) : none(d.missing_memory));

  HtmlPage page;
  page.title = o.title;
  page.subtitle = o.source;
  page.sections = data.sections;
  page.body = std::move(body);
  page.data_json = page_data_json(data, o);
  return render_html_page(page);
}

}  // namespace jaxprof
