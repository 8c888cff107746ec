#include "jaxprof/analysis/steps/modules.h"

#include <algorithm>
#include <map>

#include "jaxprof/analysis/partial/extract_partials.h"
#include "jaxprof/model/partial/partial.h"

namespace jaxprof {

ModulesResult modules_from_partials(const PartialSet& set, const ModulesOptions& options) {
  set.require(kPartExecutions | (options.top_ops > 0 ? uint32_t{kPartExecutionOps} : 0u) |
                  (options.steps ? uint32_t{kPartSteps} : 0u),
              "modules");
  ModulesResult result;
  set.require_steady(options.steady, "modules");
  auto sets_apart = [&](ExecutionRole role) {
    return (role == ExecutionRole::kAutotuning && !options.steady.include_autotuning) ||
           (role == ExecutionRole::kWarmup && !options.steady.include_warmup);
  };
  // Per module, its executions on every device, one host at a time: the moments of the steady
  // executions and of all of them (a program run once per device has no steady state and is
  // described by its only runs), and per op the same two when ops are asked for.
  struct Acc {
    ModuleStats m;
    size_t last_device = SIZE_MAX;
    uint64_t ops = 0;
    DurationMoments steady, all;
    std::map<std::string, DurationMoments> steady_ops, all_ops;
  };
  std::map<std::pair<std::string, ProgramId>, Acc> by_module;
  size_t di = 0;
  set.for_each_device(
      [&](const PartialSet::DeviceRef&, const HostPartial& h, const PartialDevice& d) {
        for (const PartialExecution& x : d.executions) {
          if (x.role == ExecutionRole::kAutotuning && sets_apart(x.role)) continue;
          Acc& a =
              by_module[{std::string(h.module_name(x.module)), h.modules[x.module].program_id}];
          ModuleStats& m = a.m;
          if (a.last_device != di) {
            a.last_device = di;
            ++m.devices;
          }
          const int64_t duration = x.end_ps - x.start_ps;
          ++m.executions;
          a.ops += x.events;
          m.autotuning |= x.role == ExecutionRole::kAutotuning;
          if (x.warmup) {
            ++m.warmup_executions;
            m.warmup_total_ps += duration;
          }
          bool steady = false;
          if (!sets_apart(x.role)) {
            m.total_ps += duration;
            steady = !x.warmup || options.steady.include_warmup;
          }
          a.all.add(duration);
          if (steady) a.steady.add(duration);
          // Per op: its summed duration in each execution (absent = 0 is not assumed: an op that
          // is missing from a run is counted over the runs that have it); skipped when no op is
          // asked for (summary).
          if (options.top_ops > 0)
            for (uint32_t k = x.first_op; k < x.first_op + x.ops; ++k) {
              const PartialExecutionOp& o = d.execution_ops[k];
              std::string name(h.str(o.name));
              if (steady) a.steady_ops[name].add(o.total_ps);
              a.all_ops[std::move(name)].add(o.total_ps);
            }
        }
        ++di;
      },
      kPartExecutions | kPartExecutionOps);

  for (auto& [key, a] : by_module) {
    ModuleStats& m = a.m;
    m.name = key.first;
    m.program_id = key.second;
    const DurationMoments& durations = a.steady.count ? a.steady : a.all;
    m.min_ps = durations.min;
    m.max_ps = durations.max;
    m.mean_ps = durations.mean();
    m.std_ps = durations.std();
    m.cv = m.mean_ps > 0 ? m.std_ps / m.mean_ps : 0;
    m.ops_per_execution = static_cast<double>(a.ops) / static_cast<double>(m.executions);
    for (const auto& [name, v] : a.steady.count ? a.steady_ops : a.all_ops) {
      if (v.count < 2) continue;
      OpVariability& o = m.varying_ops.emplace_back();
      o.name = name;
      o.count = v.count;
      o.mean_ps = v.mean();
      o.std_ps = v.std();
      o.cv = o.mean_ps > 0 ? o.std_ps / o.mean_ps : 0;
    }
    std::sort(m.varying_ops.begin(), m.varying_ops.end(),
              [](const OpVariability& a, const OpVariability& b) {
                return a.cv != b.cv ? a.cv > b.cv : a.name < b.name;
              });
    if (m.varying_ops.size() > options.top_ops) m.varying_ops.resize(options.top_ops);
    result.total_ps += m.total_ps;
    result.modules.push_back(std::move(m));
  }
  for (ModuleStats& m : result.modules)
    m.share = result.total_ps > 0
                  ? static_cast<double>(m.total_ps) / static_cast<double>(result.total_ps)
                  : 0;
  std::sort(result.modules.begin(), result.modules.end(),
            [](const ModuleStats& a, const ModuleStats& b) {
              if (a.total_ps != b.total_ps) return a.total_ps > b.total_ps;
              return a.name != b.name ? a.name < b.name : a.program_id < b.program_id;
            });
  if (options.steps) result.steps = steps_from_partials(set);
  return result;
}

ModulesResult compute_modules(const Profile& p, const ModulesOptions& options) {
  PartialExtractOptions extract;
  extract.parts = kPartExecutions | (options.top_ops > 0 ? uint32_t{kPartExecutionOps} : 0u) |
                  (options.steps ? uint32_t{kPartSteps} : 0u);
  extract.steady = options.steady;
  return modules_from_partials(PartialSet(extract_partials(p, extract)), options);
}

}  // namespace jaxprof
