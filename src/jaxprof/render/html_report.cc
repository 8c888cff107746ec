#include "jaxprof/render/html_report.h"

#include <fmt/format.h>

#include <algorithm>

#include "jaxprof/analysis/collectives.h"
#include "jaxprof/analysis/compile.h"
#include "jaxprof/analysis/flame.h"
#include "jaxprof/analysis/kernels.h"
#include "jaxprof/analysis/module_executions.h"
#include "jaxprof/analysis/modules.h"
#include "jaxprof/analysis/steps.h"
#include "jaxprof/analysis/summary.h"
#include "jaxprof/analysis/timeline.h"
#include "jaxprof/render/flame_svg.h"
#include "jaxprof/render/html_charts.h"
#include "jaxprof/render/html_page.h"
#include "jaxprof/render/html_table.h"
#include "jaxprof/render/steady_state_render.h"
#include "jaxprof/render/text.h"
#include "jaxprof/render/units.h"

namespace jaxprof {
namespace {

constexpr size_t kMaxBars = 64;   // devices drawn in the breakdown
constexpr size_t kMaxSeries = 8;  // devices drawn in the step plot

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
    kv("compute", fmt::format("{} ({})", human_duration(static_cast<double>(d.compute_ps)),
                              human_percent(static_cast<double>(d.compute_ps) / span)));
    kv("exposed communication",
       fmt::format("{} ({})", human_duration(static_cast<double>(d.comm_exposed_ps)),
                   human_percent(static_cast<double>(d.comm_exposed_ps) / span)));
    kv("exposed memcpy",
       fmt::format("{} ({})", human_duration(static_cast<double>(d.memcpy_exposed_ps)),
                   human_percent(static_cast<double>(d.memcpy_exposed_ps) / span)));
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
  for (size_t i = 0; i < m.modules.size() && i < top; ++i) {
    const ModuleStats& s = m.modules[i];
    t.rows.push_back({text_cell(s.name), count_cell(static_cast<double>(s.executions)),
                      count_cell(static_cast<double>(s.warmup_executions)),
                      duration_cell(s.mean_ps), duration_cell(s.std_ps),
                      duration_cell(static_cast<double>(s.min_ps)),
                      duration_cell(static_cast<double>(s.max_ps)),
                      duration_cell(static_cast<double>(s.total_ps)), percent_cell(s.share),
                      count_cell(static_cast<double>(s.devices))});
  }
  return "<p class=\"muted\">Mean, std, min and max are over steady-state executions (warm-up runs "
         "apart). Click a header to sort.</p>\n" +
         table(data, t);
}

std::string ops_body(PageData& data, const SummaryResult& s) {
  if (s.ops.empty()) return none("No device ops in this profile.");
  HtmlTable t;
  t.id = "ops-table";
  t.add_column("op", false);
  t.add_column("module", false);
  t.add_column("opcode", false);
  t.add_column("count", true);
  t.add_column("total", true);
  t.add_column("self", true);
  t.add_column("share", true);
  t.add_column("JAX op", false);
  t.add_column("source", false);
  for (const SummaryOp& o : s.ops)
    t.rows.push_back({text_cell(o.name), text_cell(o.module), text_cell(o.opcode),
                      count_cell(static_cast<double>(o.count)),
                      duration_cell(static_cast<double>(o.total_ps)),
                      duration_cell(static_cast<double>(o.self_ps)), percent_cell(o.share),
                      text_cell(o.op_name), text_cell(o.source)});
  return "<p class=\"muted\">HLO ops over all devices; share = self time / busy time of all "
         "devices.</p>\n" +
         table(data, t);
}

std::string flame_body(const FlameTree& tree, const std::string& title) {
  if (tree.devices.empty()) return none("No device op events: no flamegraph.");
  FlameSvgOptions o;
  o.title = title;
  o.min_fraction = 1e-4;  // bounds the page for huge trees
  std::string svg = render_flame_svg(tree, o);
  // The XML declaration has no place inside an HTML document.
  if (svg.starts_with("<?xml")) svg.erase(0, svg.find('\n') + 1);
  return "<div class=\"flame\">\n" + svg + "</div>\n";
}

std::string collectives_body(PageData& data, const CollectivesResult& c, size_t top) {
  if (c.ops.empty()) return none("No collectives in this profile.");
  std::string out =
      fmt::format("<p class=\"muted\">Bandwidth convention: {}.</p>\n", h(c.convention));
  std::vector<ScatterPoint> points;
  for (const CollectiveOp& op : c.ops)
    if (op.message_bytes > 0 && op.busbw_gbps > 0)
      points.push_back({static_cast<double>(op.message_bytes), op.busbw_gbps,
                        fmt::format("{} ({}, N={}): {} bytes, {:.3g} GB/s", op.name, op.opcode,
                                    op.group_size, op.message_bytes, op.busbw_gbps)});
  if (points.empty())
    out += none("Message sizes are unknown (the profile carries no HLO): no bandwidth plot.");
  else
    out += svg_scatter(points, "message size", "bus bandwidth (GB/s)");
  HtmlTable t;
  t.id = "collectives-table";
  t.add_column("op", false);
  t.add_column("module", false);
  t.add_column("opcode", false);
  t.add_column("N", true);
  t.add_column("message bytes", true);
  t.add_column("count", true);
  t.add_column("total", true);
  t.add_column("exposed", true);
  t.add_column("hidden", true);
  t.add_column("busbw GB/s", true);
  t.add_column("wait", true);
  for (size_t i = 0; i < c.ops.size() && i < top; ++i) {
    const CollectiveOp& op = c.ops[i];
    t.rows.push_back({text_cell(op.name), text_cell(op.module), text_cell(op.opcode),
                      count_cell(static_cast<double>(op.group_size)),
                      count_cell(static_cast<double>(op.message_bytes)),
                      count_cell(static_cast<double>(op.count)),
                      duration_cell(static_cast<double>(op.total_ps)),
                      duration_cell(static_cast<double>(op.exposed_ps)),
                      duration_cell(static_cast<double>(op.hidden_ps)), number_cell(op.busbw_gbps),
                      duration_cell(static_cast<double>(op.wait_total_ps))});
  }
  return out + table(data, t);
}

std::string kernels_body(PageData& data, const KernelsResult& k, size_t top) {
  if (k.kernels.empty())
    return none(k.no_gpu_reason.empty() ? "No GPU kernels in this profile." : k.no_gpu_reason);
  HtmlTable t;
  t.id = "kernels-table";
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
    t.rows.push_back({text_cell(g.name), count_cell(static_cast<double>(g.count)),
                      duration_cell(static_cast<double>(g.total_ps)), duration_cell(g.mean_ps),
                      duration_cell(static_cast<double>(g.min_ps)),
                      duration_cell(static_cast<double>(g.max_ps)), percent_cell(share),
                      text_cell(g.hlo_op), text_cell(g.op_name),
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

// Steps as the profile marks them (StepTraceAnnotation, Steps lines, group ids) when it does: their
// wall time one point per step, and a table of their boundaries. Otherwise the module with the most
// device time (as `jaxprof check` takes it) stands for the step: its execution times per device, in
// order, show warm-up, drift and outliers.
std::string annotated_steps_body(PageData& data, const StepsResult& steps, size_t devices) {
  data.step_source = "annotation";
  const int64_t t0 = steps.steps.front().start_ps;
  const bool host = steps.source == "host-annotation";
  LineSeries wall{host ? "step (annotation)" : "step (device marks)", {}, {}};
  LineSeries busy{"device time per device", {}, {}};
  std::vector<std::string> numbers;
  HtmlTable t;
  t.id = "steps-table";
  t.add_column("step", true);
  t.add_column("name", false);
  t.add_column("start", true);
  t.add_column("end", true);
  t.add_column("duration", true);
  t.add_column("executions", true);
  t.add_column("device time", true);
  t.add_column("warm-up", false);
  for (const Step& s : steps.steps) {
    double d = static_cast<double>(s.duration_ps());
    double per_device =
        devices ? static_cast<double>(s.device_ps) / static_cast<double>(devices) : 0.0;
    std::string when = fmt::format("[{}, {}) after the first step's start",
                                   human_duration(static_cast<double>(s.start_ps - t0)),
                                   human_duration(static_cast<double>(s.end_ps - t0)));
    numbers.push_back(fmt::format("{}", s.number));
    wall.ys.push_back(d);
    wall.tips.push_back(fmt::format("{} {}: {}{}, {}", s.name, s.number, human_duration(d),
                                    s.warmup ? " (warm-up)" : "", when));
    busy.ys.push_back(per_device);
    busy.tips.push_back(fmt::format("{} {}: {} device time per device", s.name, s.number,
                                    human_duration(per_device)));
    t.rows.push_back({count_cell(static_cast<double>(s.number)), text_cell(s.name),
                      duration_cell(static_cast<double>(s.start_ps - t0)),
                      duration_cell(static_cast<double>(s.end_ps - t0)), duration_cell(d),
                      count_cell(static_cast<double>(s.executions)),
                      duration_cell(static_cast<double>(s.device_ps)),
                      text_cell(s.warmup ? "yes" : "")});
  }
  size_t warm = 0;
  for (const Step& s : steps.steps) warm += s.warmup ? 1 : 0;
  const char* source = host                           ? "StepTraceAnnotation"
                       : steps.source == "steps-line" ? "the devices' Steps lines"
                                                      : "group_id stats of device events";
  const char* span = host ? "from the start to the end of its annotation on the host"
                          : "from its earliest start to its latest end over the devices";
  return fmt::format(
             "<p class=\"muted\">Steps as the profile marks them ({}): {} steps, one point "
             "each, {}; {} hold a program's first execution (compile and warm-up). Steady-state "
             "mean {}. The second line is the module time that started in the step, per device "
             "({} devices). Hover a point for the step's boundaries.</p>\n",
             source, steps.steps.size(), span, warm, human_duration(steps.steady_mean_ps),
             devices) +
         svg_duration_lines({wall, busy}, host ? "step (annotation step_num)" : "step number",
                            numbers) +
         data.table(t);
}

std::string steps_body(PageData& data, const Profile& profile, const ModulesResult& m) {
  const std::vector<DeviceExecutions>& all = module_executions(profile);
  StepsResult steps = compute_steps(profile);
  if (!m.modules.empty()) data.step = m.modules.front().name;
  if (steps.steps.size() >= 2) {
    size_t devices = 0;
    for (const DeviceExecutions& d : all) devices += d.executions.empty() ? 0 : 1;
    return annotated_steps_body(data, steps, devices);
  }
  if (m.modules.empty()) return none("No module executions and no step marks: no steps to plot.");
  const std::string& step = m.modules.front().name;
  data.step_source = "module";
  std::vector<LineSeries> series;
  size_t most = 0;
  for (const DeviceExecutions& d : all) {
    LineSeries s{d.device, {}, {}};
    for (const ModuleExecution& e : d.executions)
      if (e.name == step) s.ys.push_back(static_cast<double>(e.duration_ps()));
    most = std::max(most, s.ys.size());
    if (!s.ys.empty() && series.size() < kMaxSeries) series.push_back(std::move(s));
  }
  if (most < 2)
    return none(fmt::format("The step module {} ran once per device: no step-time plot.", step));
  return fmt::format(
             "<p class=\"muted\">{} (StepTraceAnnotation) in this profile: the module with the "
             "most device time, <code>{}</code>, stands for the step. Its execution time, "
             "execution by execution.</p>\n",
             steps.steps.empty() ? "No step marks" : "Only one step mark", h(step)) +
         svg_duration_lines(series, "execution");
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

std::string render_html_report(const Profile& profile, const HtmlReportOptions& o) {
  SummaryOptions so;
  so.top = o.top;
  so.observations = 10;
  so.steady = o.steady;
  SummaryResult summary = compute_summary(profile, so);
  TimelineResult timeline = compute_timeline(profile, o.steady);
  ModulesResult modules = compute_modules(profile, {.steady = o.steady});
  FlameOptions fs;
  fs.steady = o.steady;
  fs.by = FlameBy::kSource;
  FlameTree flame_source = compute_flame(profile, fs);
  fs.by = FlameBy::kOpName;
  FlameTree flame_op = compute_flame(profile, fs);
  CollectivesResult collectives = compute_collectives(profile, {.steady = o.steady});
  KernelsResult kernels = compute_kernels(profile, {.steady = o.steady});
  CompileResult compile = compute_compile(profile);

  PageData data;
  data.hosts = summary.hosts;
  std::string body;
  body += section(data, "summary", "Summary", summary_body(summary, o.source));
  body += section(data, "device-time", "Device time per device", device_time_body(timeline));
  body += section(data, "steps", "Step time", steps_body(data, profile, modules));
  body += section(data, "modules", "Top modules", modules_body(data, modules, o.top));
  body += section(data, "ops", "Top ops", ops_body(data, summary));
  body += section(data, "flame-source", "Flamegraph by source line",
                  flame_body(flame_source, "device time by source line"));
  body += section(data, "flame-op-name", "Flamegraph by JAX op path",
                  flame_body(flame_op, "device time by JAX op path"));
  body += section(data, "collectives", "Collectives", collectives_body(data, collectives, o.top));
  body += section(data, "kernels", "GPU kernels", kernels_body(data, kernels, o.top));
  body += section(data, "compile", "Compile phases", compile_body(data, compile));

  HtmlPage page;
  page.title = o.title;
  page.subtitle = o.source;
  page.sections = data.sections;
  page.body = std::move(body);
  page.data_json = page_data_json(data, o);
  return render_html_page(page);
}

}  // namespace jaxprof
