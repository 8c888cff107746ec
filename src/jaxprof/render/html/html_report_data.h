// What `jaxprof report` shows, computed before the page is written: from one profile
// (render_html_report) or from partial summaries (html_report_partials.h). A section whose
// figures cannot be had from the input says why instead of showing numbers.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "jaxprof/analysis/collectives/collectives.h"
#include "jaxprof/analysis/compile/compile.h"
#include "jaxprof/analysis/cost/roofline.h"
#include "jaxprof/analysis/critical_path/critical_path.h"
#include "jaxprof/analysis/flame/flame.h"
#include "jaxprof/analysis/memory/memory.h"
#include "jaxprof/analysis/ops/kernels.h"
#include "jaxprof/analysis/steps/modules.h"
#include "jaxprof/analysis/steps/steps.h"
#include "jaxprof/analysis/summary/summary.h"
#include "jaxprof/analysis/timeline/timeline.h"
#include "jaxprof/render/html/html_report_steps.h"

namespace jaxprof {

struct HtmlReportData {
  SummaryResult summary;  // every op (top = SIZE_MAX): the ops and source-line tables pick rows
  TimelineResult timeline;
  ModulesResult modules;
  StepsResult steps;
  // Each op device's module executions, for the step-time section when no steps are marked
  // (empty when they are); and how many devices have any.
  std::vector<StepDeviceRuns> step_runs;
  size_t step_devices = 0;
  FlameTree flame_source, flame_op;        // report_flame's: the devices merged
  std::optional<RooflineResult> roofline;  // absent: `missing_roofline` says why
  CollectivesResult collectives;
  KernelsResult kernels;
  CompileResult compile;
  std::optional<MemoryResult> memory;               // absent: `missing_memory` says why
  std::optional<CriticalPathResult> critical_path;  // absent: `missing_critical_path` says why
  std::string missing_roofline, missing_memory, missing_critical_path;
};

// A flamegraph as the page draws it: every device's stacks in one tree, each frame weighing its
// time summed over the devices, under "all N devices" (the device's name when there is one).
// Made as soon as the tree is, so that a tree of thousands of devices is not kept.
FlameTree report_flame(const FlameTree& per_device);
// Its root's name.
std::string report_flame_root(const FlameTree& tree);

}  // namespace jaxprof
