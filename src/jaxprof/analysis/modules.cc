#include "jaxprof/analysis/modules.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <unordered_map>

#include "jaxprof/analysis/module_executions.h"

namespace jaxprof {

namespace {

struct Moments {
  double mean = 0, std = 0;
};

Moments moments(const std::vector<double>& v) {
  Moments m;
  if (v.empty()) return m;
  for (double x : v) m.mean += x;
  m.mean /= static_cast<double>(v.size());
  double ss = 0;
  for (double x : v) ss += (x - m.mean) * (x - m.mean);
  m.std = std::sqrt(ss / static_cast<double>(v.size()));
  return m;
}

}  // namespace

ModulesResult compute_modules(const Profile& p, const ModulesOptions& options) {
  ModulesResult result;
  struct Run {
    const ModuleExecution* x;
    ExecutionRole role;
  };
  std::map<std::pair<std::string, ProgramId>, std::vector<Run>> by_module;
  std::map<std::pair<std::string, ProgramId>, std::set<size_t>> devices;
  const std::vector<DeviceExecutions>& all = module_executions(p);
  const SteadyState& st = steady_state(p, options.steady);
  for (size_t di = 0; di < all.size(); ++di)
    for (size_t k = 0; k < all[di].executions.size(); ++k) {
      const ModuleExecution& x = all[di].executions[k];
      ExecutionRole role = st.roles[di][k];
      if (role == ExecutionRole::kAutotuning && st.sets_apart(role)) continue;
      by_module[{x.name, x.program_id}].push_back({&x, role});
      devices[{x.name, x.program_id}].insert(di);
    }

  for (auto& [key, runs] : by_module) {
    ModuleStats m;
    m.name = key.first;
    m.program_id = key.second;
    m.devices = devices[key].size();
    std::vector<const ModuleExecution*> steady, execs;
    uint64_t ops = 0;
    for (const Run& run : runs) {
      const ModuleExecution* x = run.x;
      execs.push_back(x);
      ++m.executions;
      ops += x->events.size();
      m.autotuning |= run.role == ExecutionRole::kAutotuning;
      if (x->warmup) {
        ++m.warmup_executions;
        m.warmup_total_ps += x->duration_ps();
      }
      if (!st.sets_apart(run.role)) {
        m.total_ps += x->duration_ps();
        if (!x->warmup || options.steady.include_warmup) steady.push_back(x);
      }
    }
    // A program run once per device has no steady state: describe its only runs.
    if (steady.empty()) steady = execs;
    std::vector<double> durations;
    m.min_ps = steady.front()->duration_ps();
    m.max_ps = m.min_ps;
    for (const ModuleExecution* x : steady) {
      durations.push_back(static_cast<double>(x->duration_ps()));
      m.min_ps = std::min(m.min_ps, x->duration_ps());
      m.max_ps = std::max(m.max_ps, x->duration_ps());
    }
    Moments mo = moments(durations);
    m.mean_ps = mo.mean;
    m.std_ps = mo.std;
    m.cv = mo.mean > 0 ? mo.std / mo.mean : 0;
    m.ops_per_execution = static_cast<double>(ops) / static_cast<double>(m.executions);

    // Per op: its summed duration in each steady execution (absent = 0 is not assumed: an op
    // that is missing from a run is counted over the runs that have it). Keyed by interned name
    // (equal strings share an id); skipped when no op is asked for (summary).
    std::unordered_map<StringId, std::vector<double>> per_op;
    if (options.top_ops > 0)
      for (const ModuleExecution* x : steady) {
        std::unordered_map<StringId, int64_t> sums;
        for (uint32_t e : x->events) {
          StringId op = p.events.hlo_op[e];
          sums[op ? op : p.event_metadata[p.events.metadata[e]].name] += p.events.duration_ps[e];
        }
        for (auto& [name, s] : sums) per_op[name].push_back(static_cast<double>(s));
      }
    for (auto& [name, v] : per_op) {
      if (v.size() < 2) continue;
      Moments om = moments(v);
      OpVariability& o = m.varying_ops.emplace_back();
      o.name = std::string(p.str(name));
      o.count = v.size();
      o.mean_ps = om.mean;
      o.std_ps = om.std;
      o.cv = om.mean > 0 ? om.std / om.mean : 0;
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
  result.steps = options.steps ? compute_steps(p) : StepsResult{};
  return result;
}

}  // namespace jaxprof
