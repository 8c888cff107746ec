#include "jaxprof/render/html/html_report_partials.h"

#include "jaxprof/analysis/flame/flame_partial.h"
#include "jaxprof/analysis/partial/extract_partials.h"

namespace jaxprof {

PartialExtractOptions html_report_extract(const SteadyStateOptions& steady) {
  PartialExtractOptions extract;
  extract.parts = kPartAll;
  extract.steady = steady;
  extract.flame_bys = (1u << static_cast<uint32_t>(FlameBy::kSource)) |
                      (1u << static_cast<uint32_t>(FlameBy::kOpName));
  return extract;
}

HtmlReportData html_report_data_from_partials(const PartialSet& set,
                                              const SteadyStateOptions& steady) {
  set.require(kPartAll, "report");
  HtmlReportData d;
  SummaryOptions so;
  so.top = SIZE_MAX;
  so.observations = 10;
  so.steady = steady;
  d.summary = summary_from_partials(set, so);
  d.timeline = timeline_from_partials(set, steady);
  d.modules = modules_from_partials(set, {.steady = steady});
  d.steps = steps_from_partials(set);
  // One host at a time (set.hosts() would hold every host's partial at once). The runs only
  // where no steps are marked: the section then draws the step module's executions.
  const bool marked = d.steps.steps.size() >= 2;
  set.for_each_device(
      [&](const PartialSet::DeviceRef&, const HostPartial& h, const PartialDevice& dev) {
        d.step_devices += dev.executions.empty() ? 0 : 1;
        if (marked) return;
        StepDeviceRuns& runs = d.step_runs.emplace_back();
        runs.device = dev.name;
        for (const PartialExecution& e : dev.executions)
          runs.runs.push_back({std::string(h.module_name(e.module)), h.modules[e.module].program_id,
                               e.end_ps - e.start_ps, e.warmup});
      },
      kPartExecutions);
  FlameOptions fs;
  fs.steady = steady;
  fs.by = FlameBy::kSource;
  // The devices merged as the tree is built: thousands of hosts' devices are never kept apart.
  fs.merge_devices = true;
  d.flame_source = flame_from_partials(set, fs);
  fs.by = FlameBy::kOpName;
  d.flame_op = flame_from_partials(set, fs);
  for (FlameTree* t : {&d.flame_source, &d.flame_op})
    if (!t->devices.empty()) t->nodes[0].name = report_flame_root(*t);
  d.collectives = collectives_from_partials(set, {.steady = steady});
  d.kernels = kernels_from_partials(set, {.steady = steady});
  // The section shows phases and modules, not each compile's steps: one kept per compile, so
  // that thousands of hosts' compiles do not hold every HLO pass.
  d.compile = compile_from_partials(set, {.top_steps = 1});
  d.missing_roofline =
      "Not in partial files: give the profiles. The roofline needs each op's FLOPs and bytes "
      "from the HLO, which a partial summary does not keep.";
  d.missing_memory =
      "Not in partial files: give the profiles. The memory section needs the allocator's "
      "events and the buffer assignment, which a partial summary does not keep.";
  d.missing_critical_path =
      "Not in partial files: give the profiles. The critical path follows each step's events, "
      "which a partial summary does not keep.";
  return d;
}

}  // namespace jaxprof
