#include "jaxprof/render/html/html_report_steps.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <tuple>

#include "jaxprof/analysis/stats/significance.h"
#include "jaxprof/analysis/steps/module_executions.h"
#include "jaxprof/analysis/steps/steps.h"
#include "jaxprof/common/units.h"
#include "jaxprof/render/flame/flame_svg.h"
#include "jaxprof/render/html/html_step_chart.h"
#include "jaxprof/render/html/html_table.h"

namespace jaxprof {
namespace {

constexpr size_t kMaxSeries = 8;  // devices drawn when a module stands for the step

std::string h(std::string_view s) { return xml_escape(s); }

std::string none(std::string_view why) { return fmt::format("<p class=\"none\">{}</p>\n", h(why)); }

std::string annotated(HtmlPageParts& parts, const StepsResult& steps, size_t devices) {
  const int64_t t0 = steps.steps.front().start_ps;
  const bool host = steps.source == "host-annotation";
  StepChart chart;
  chart.x_label = host ? "step (annotation step_num)" : "step number";
  chart.y_label = "step time";
  StepSeries wall{host ? "step (annotation)" : "step (device marks)", {}, {}, {}};
  StepSeries busy{"device time per device", {}, {}, {}};
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
  size_t warm = 0;
  for (const Step& s : steps.steps) {
    double d = static_cast<double>(s.duration_ps());
    double per_device =
        devices ? static_cast<double>(s.device_ps) / static_cast<double>(devices) : 0.0;
    std::string when = fmt::format("[{}, {}) after the first step's start",
                                   human_duration(static_cast<double>(s.start_ps - t0)),
                                   human_duration(static_cast<double>(s.end_ps - t0)));
    warm += s.warmup ? 1 : 0;
    chart.x_names.push_back(fmt::format("{}", s.number));
    wall.ys.push_back(d);
    wall.warmup.push_back(s.warmup);
    wall.tips.push_back(fmt::format("{} {}: {}{}, {}", s.name, s.number, human_duration(d),
                                    s.warmup ? " (warm-up)" : "", when));
    busy.ys.push_back(per_device);
    busy.warmup.push_back(s.warmup);
    busy.tips.push_back(fmt::format("{} {}: {} device time per device", s.name, s.number,
                                    human_duration(per_device)));
    t.rows.push_back({count_cell(static_cast<double>(s.number)), text_cell(s.name),
                      duration_cell(static_cast<double>(s.start_ps - t0)),
                      duration_cell(static_cast<double>(s.end_ps - t0)), duration_cell(d),
                      count_cell(static_cast<double>(s.executions)),
                      duration_cell(static_cast<double>(s.device_ps)),
                      text_cell(s.warmup ? "yes" : "")});
  }
  chart.series = {std::move(wall), std::move(busy)};
  const char* source = host                           ? "StepTraceAnnotation"
                       : steps.source == "steps-line" ? "the devices' Steps lines"
                                                      : "group_id stats of device events";
  const char* span = host ? "from the start to the end of its annotation on the host"
                          : "from its earliest start to its latest end over the devices";
  return fmt::format(
             "<p class=\"muted\">Steps as the profile marks them ({}): {} steps, one point "
             "each, {}; {} are warm-up (the host compiled during them, or they hold a "
             "program's first execution after its compile), drawn apart on the left on their "
             "own scale. Steady-state mean {}. The second line is the "
             "module time that started in the step, per device ({} devices). Hover a point for "
             "the step's boundaries.</p>\n",
             source, steps.steps.size(), span, warm, human_duration(steps.steady_mean_ps),
             devices) +
         svg_step_chart(chart) + parts.table(t);
}

// A step that several hosts mark: each host's k-th mark of one (number, name) together, as
// critical-path merges them.
struct StepAcross {
  const Step* first = nullptr;  // the earliest mark
  std::vector<double> durations;
  double slowest = -1;
  uint32_t slowest_host = 0;
  uint64_t executions = 0;
  int64_t device_ps = 0;
  bool warmup = false;
};

// Several hosts' steps: one point and one row per step across the hosts, with its slowest and
// median host (a thousand hosts' own steps made a table of 48,000 rows).
std::string across_hosts(HtmlPageParts& parts, const StepsResult& steps, size_t devices,
                         const std::vector<std::string>& hosts, size_t marking_hosts) {
  std::vector<StepAcross> across;
  std::map<std::tuple<int64_t, std::string_view, uint32_t>, size_t> index;
  const std::vector<uint32_t> occurrence = step_occurrences(steps.steps);
  for (size_t k = 0; k < steps.steps.size(); ++k) {  // by start
    const Step& s = steps.steps[k];
    auto [it, added] = index.try_emplace({s.number, s.name, occurrence[k]}, across.size());
    if (added) across.push_back({&s});
    StepAcross& a = across[it->second];
    const double d = static_cast<double>(s.duration_ps());
    a.durations.push_back(d);
    if (d > a.slowest) a.slowest = d, a.slowest_host = s.host;
    a.executions += s.executions;
    a.device_ps += s.device_ps;
    a.warmup = a.warmup || s.warmup;
  }
  const int64_t t0 = steps.steps.front().start_ps;
  const bool host = steps.source == "host-annotation";
  auto host_name = [&](uint32_t h) {
    return h < hosts.size() ? hosts[h] : fmt::format("host {}", h);
  };
  StepChart chart;
  chart.x_label = host ? "step (annotation step_num)" : "step number";
  chart.y_label = "step time";
  StepSeries slowest{"slowest host", {}, {}, {}}, median_host{"median host", {}, {}, {}},
      busy{"device time per device", {}, {}, {}};
  HtmlTable t;
  t.id = "steps-table";
  for (const char* c : {"step", "name", "hosts", "start", "slowest host", "its step time",
                        "median step time", "executions", "device time", "warm-up"})
    t.add_column(c, std::string_view(c) != "name" && std::string_view(c) != "slowest host" &&
                        std::string_view(c) != "warm-up");
  size_t warm = 0;
  for (const StepAcross& a : across) {
    const Step& s = *a.first;
    const double med = median(a.durations);
    const double per_device =
        devices ? static_cast<double>(a.device_ps) / static_cast<double>(devices) : 0.0;
    warm += a.warmup ? 1 : 0;
    chart.x_names.push_back(fmt::format("{}", s.number));
    slowest.ys.push_back(a.slowest);
    median_host.ys.push_back(med);
    busy.ys.push_back(per_device);
    for (StepSeries* x : {&slowest, &median_host, &busy}) x->warmup.push_back(a.warmup);
    slowest.tips.push_back(fmt::format("{} {}: {} on {}, the slowest of {} hosts", s.name, s.number,
                                       human_duration(a.slowest), host_name(a.slowest_host),
                                       a.durations.size()));
    median_host.tips.push_back(
        fmt::format("{} {}: {}, the median host's", s.name, s.number, human_duration(med)));
    busy.tips.push_back(fmt::format("{} {}: {} device time per device", s.name, s.number,
                                    human_duration(per_device)));
    t.rows.push_back({count_cell(static_cast<double>(s.number)), text_cell(s.name),
                      count_cell(static_cast<double>(a.durations.size())),
                      duration_cell(static_cast<double>(s.start_ps - t0)),
                      text_cell(host_name(a.slowest_host)), duration_cell(a.slowest),
                      duration_cell(med), count_cell(static_cast<double>(a.executions)),
                      duration_cell(static_cast<double>(a.device_ps)),
                      text_cell(a.warmup ? "yes" : "")});
  }
  chart.series = {std::move(slowest), std::move(median_host), std::move(busy)};
  return fmt::format(
             "<p class=\"muted\">Steps as {} hosts mark them ({}): {} steps, one point each, "
             "each host's step from the start to the end of its mark, and the same step of "
             "every host together (a host's k-th mark of a number with the others' k-th); {} "
             "are warm-up, drawn apart on the left on their own scale. The lines are the "
             "slowest host's step time, the median host's, and the module time that started in "
             "the step per device ({} devices). Hover a point for the slowest host.</p>\n",
             marking_hosts, host ? "StepTraceAnnotation" : "device step marks", across.size(), warm,
             devices) +
         svg_step_chart(chart) + parts.table(t);
}

}  // namespace

std::vector<StepDeviceRuns> step_runs(const Profile& profile) {
  std::vector<StepDeviceRuns> devices;
  for (const DeviceExecutions& d : module_executions(profile)) {
    StepDeviceRuns& runs = devices.emplace_back();
    runs.device = d.device;
    for (const ModuleExecution& e : d.executions)
      runs.runs.push_back({e.name, e.program_id, e.duration_ps(), e.warmup});
  }
  return devices;
}

std::string html_steps_body(HtmlPageParts& parts, const StepsResult& steps,
                            const std::vector<StepDeviceRuns>& all, const ModulesResult& m,
                            const std::vector<std::string>& hosts, size_t step_devices,
                            StepsSectionInfo& info) {
  if (!m.modules.empty()) info.step = m.modules.front().name;
  if (steps.steps.size() >= 2) {
    info.source = "annotation";
    std::vector<uint8_t> marks;
    for (const Step& s : steps.steps) {
      if (s.host >= marks.size()) marks.resize(s.host + 1, 0);
      marks[s.host] = 1;
    }
    const size_t marking = static_cast<size_t>(std::count(marks.begin(), marks.end(), 1));
    if (marking > 1) return across_hosts(parts, steps, step_devices, hosts, marking);
    return annotated(parts, steps, step_devices);
  }
  if (m.modules.empty()) return none("No module executions and no step marks: no steps to plot.");
  // The program, not only the name: JAX compiles one name many times (five jit_dot programs).
  const ModuleStats& top = m.modules.front();
  info.source = "module";
  StepChart chart;
  chart.x_label = "execution";
  chart.y_label = "execution time";
  size_t most = 0, warm = 0, devices = 0;
  for (const StepDeviceRuns& d : all) {
    StepSeries s{d.device, {}, {}, {}};
    for (const StepRun& e : d.runs) {
      if (e.name != top.name || (top.program_id != kNoProgram && e.program_id != top.program_id))
        continue;
      s.ys.push_back(static_cast<double>(e.duration_ps));
      s.warmup.push_back(e.warmup);
      warm += e.warmup ? 1 : 0;
      s.tips.push_back(fmt::format("{} execution {}: {}{}", d.device, s.ys.size() - 1,
                                   human_duration(s.ys.back()), e.warmup ? " (warm-up)" : ""));
    }
    most = std::max(most, s.ys.size());
    devices += s.ys.empty() ? 0 : 1;
    if (!s.ys.empty() && chart.series.size() < kMaxSeries) chart.series.push_back(std::move(s));
  }
  if (most < 2)
    return none(
        fmt::format("The step module {} ran once per device: no step-time plot.", top.name));
  return fmt::format(
             "<p class=\"muted\">{} (StepTraceAnnotation) in this profile: the module with the "
             "most device time, <code>{}</code>{}, stands for the step. Its execution time, "
             "execution by execution, one line per device{}; first executions (compile and "
             "warm-up: {}) are drawn apart on the left on their own scale.</p>\n",
             steps.steps.empty() ? "No step marks" : "Only one step mark", h(top.name),
             top.program_id != kNoProgram ? fmt::format(" (program {})", top.program_id) : "",
             chart.series.size() < devices
                 ? fmt::format(" ({} of {} devices drawn)", chart.series.size(), devices)
                 : "",
             warm) +
         svg_step_chart(chart);
}

}  // namespace jaxprof
