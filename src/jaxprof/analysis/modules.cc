#include "jaxprof/analysis/modules.h"

#include <algorithm>
#include <map>
#include <set>

#include "jaxprof/analysis/partial.h"

namespace jaxprof {

ModulesResult modules_from_partials(const PartialSet& set, const ModulesOptions& options) {
  set.require(kPartExecutions | (options.top_ops > 0 ? uint32_t{kPartExecutionOps} : 0u) |
                  (options.steps ? uint32_t{kPartSteps} : 0u),
              "modules");
  ModulesResult result;
  set.require_steady(options.steady, "modules");
  struct Exec {
    const HostPartial* host;
    const PartialDevice* device;
    const PartialExecution* x;
    int64_t duration() const { return x->end_ps - x->start_ps; }
  };
  std::map<std::pair<std::string_view, ProgramId>, std::vector<Exec>> by_module;
  std::map<std::pair<std::string_view, ProgramId>, std::set<size_t>> devices;
  auto sets_apart = [&](ExecutionRole role) {
    return (role == ExecutionRole::kAutotuning && !options.steady.include_autotuning) ||
           (role == ExecutionRole::kWarmup && !options.steady.include_warmup);
  };
  const auto& refs = set.devices();
  for (size_t di = 0; di < refs.size(); ++di) {
    const HostPartial& h = set.hosts()[refs[di].host];
    const PartialDevice& d = set.device(refs[di]);
    for (const PartialExecution& x : d.executions) {
      if (x.role == ExecutionRole::kAutotuning && sets_apart(x.role)) continue;
      std::pair<std::string_view, ProgramId> key{h.module_name(x.module),
                                                 h.modules[x.module].program_id};
      by_module[key].push_back({&h, &d, &x});
      devices[key].insert(di);
    }
  }

  for (auto& [key, execs] : by_module) {
    ModuleStats m;
    m.name = std::string(key.first);
    m.program_id = key.second;
    m.devices = devices[key].size();
    std::vector<const Exec*> steady;
    uint64_t ops = 0;
    for (const Exec& x : execs) {
      ++m.executions;
      ops += x.x->events;
      m.autotuning |= x.x->role == ExecutionRole::kAutotuning;
      if (x.x->warmup) {
        ++m.warmup_executions;
        m.warmup_total_ps += x.duration();
      }
      if (!sets_apart(x.x->role)) {
        m.total_ps += x.duration();
        if (!x.x->warmup || options.steady.include_warmup) steady.push_back(&x);
      }
    }
    // A program run once per device has no steady state: describe its only runs.
    if (steady.empty())
      for (const Exec& x : execs) steady.push_back(&x);
    DurationMoments durations;
    for (const Exec* x : steady) durations.add(x->duration());
    m.min_ps = durations.min;
    m.max_ps = durations.max;
    m.mean_ps = durations.mean();
    m.std_ps = durations.std();
    m.cv = m.mean_ps > 0 ? m.std_ps / m.mean_ps : 0;
    m.ops_per_execution = static_cast<double>(ops) / static_cast<double>(m.executions);

    // Per op: its summed duration in each steady execution (absent = 0 is not assumed: an op
    // that is missing from a run is counted over the runs that have it); skipped when no op is
    // asked for (summary).
    std::map<std::string_view, DurationMoments> per_op;
    if (options.top_ops > 0)
      for (const Exec* x : steady)
        for (uint32_t k = x->x->first_op; k < x->x->first_op + x->x->ops; ++k) {
          const PartialExecutionOp& o = x->device->execution_ops[k];
          per_op[x->host->str(o.name)].add(o.total_ps);
        }
    for (const auto& [name, v] : per_op) {
      if (v.count < 2) continue;
      OpVariability& o = m.varying_ops.emplace_back();
      o.name = std::string(name);
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
