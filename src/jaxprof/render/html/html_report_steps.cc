#include "jaxprof/render/html/html_report_steps.h"

#include <fmt/format.h>

#include <algorithm>

#include "jaxprof/analysis/steps/module_executions.h"
#include "jaxprof/analysis/steps/steps.h"
#include "jaxprof/render/flame/flame_svg.h"
#include "jaxprof/render/html/html_step_chart.h"
#include "jaxprof/render/html/html_table.h"
#include "jaxprof/common/units.h"

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
                            StepsSectionInfo& info) {
  if (!m.modules.empty()) info.step = m.modules.front().name;
  if (steps.steps.size() >= 2) {
    info.source = "annotation";
    size_t devices = 0;
    for (const StepDeviceRuns& d : all) devices += d.runs.empty() ? 0 : 1;
    return annotated(parts, steps, devices);
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
