// The report's "Step time" section: steps as the profile marks them (StepTraceAnnotation, Steps
// lines, group ids), one point per step with a table of their boundaries; without step marks the
// module with the most device time (as `jaxprof check` takes it) stands for the step, its
// executions per device in order. Warm-up is drawn apart (html_step_chart.h).
#pragma once

#include <string>

#include "jaxprof/analysis/steps/modules.h"
#include "jaxprof/analysis/steps/steps.h"
#include "jaxprof/model/profile.h"
#include "jaxprof/render/html/html_page.h"

namespace jaxprof {

struct StepsSectionInfo {
  std::string step;    // the step module, "" when there is none
  std::string source;  // what the plot shows: "annotation", "module" or ""
};

// A device's module executions, as much as the section draws of them (from a profile's
// module_executions() or from partials), one entry per op device in order.
struct StepRun {
  std::string name;
  ProgramId program_id = kNoProgram;
  int64_t duration_ps = 0;
  bool warmup = false;
};
struct StepDeviceRuns {
  std::string device;
  std::vector<StepRun> runs;  // by start
};

std::vector<StepDeviceRuns> step_runs(const Profile& profile);

// `step_devices`: the op devices with module executions (the device-time line is per device);
// `hosts`: the hosts' names, by Step::host. Steps that several hosts mark are shown one per
// step across the hosts, with the slowest and the median host.
std::string html_steps_body(HtmlPageParts& parts, const StepsResult& steps,
                            const std::vector<StepDeviceRuns>& runs, const ModulesResult& modules,
                            const std::vector<std::string>& hosts, size_t step_devices,
                            StepsSectionInfo& info);

}  // namespace jaxprof
