#include "jaxprof/analysis/tables/execution_rows.h"

#include <algorithm>

#include "jaxprof/analysis/steps/module_executions.h"

namespace jaxprof {

const ExecutionRows& execution_rows(const Profile& p) {
  return p.memo<ExecutionRows>("tables.execution_rows", [&] {
    const std::vector<DeviceExecutions>& devices = module_executions(p);
    ExecutionRows out;
    uint32_t lo = UINT32_MAX, hi = 0;
    for (const DeviceExecutions& d : devices)
      for (const ModuleExecution& x : d.executions)
        for (uint32_t e : x.events) {
          lo = std::min(lo, e);
          hi = std::max(hi, e + 1);
        }
    if (lo < hi) {
      out.first_event = lo;
      out.of_event.assign(hi - lo, -1);
    }
    int32_t next = 0;
    for (const DeviceExecutions& d : devices) {
      out.first.push_back(static_cast<uint32_t>(next));
      for (const ModuleExecution& x : d.executions) {
        for (uint32_t e : x.events) out.of_event[e - lo] = next;
        ++next;
      }
    }
    return out;
  });
}

const StepsResult& table_steps(const Profile& p) {
  return p.memo<StepsResult>("tables.steps", [&] { return compute_steps(p); });
}

StepLookup::StepLookup(const StepsResult& steps) {
  for (const Step& s : steps.steps) {
    if (s.host >= by_host_.size()) by_host_.resize(s.host + 1);
    by_host_[s.host].push_back(&s);  // by start, as compute_steps lists them
  }
}

std::optional<int64_t> StepLookup::at(uint32_t host, int64_t t) const {
  if (host >= by_host_.size()) return std::nullopt;
  const auto& steps = by_host_[host];
  auto it = std::upper_bound(steps.begin(), steps.end(), t,
                             [](int64_t v, const Step* s) { return v < s->start_ps; });
  if (it == steps.begin()) return std::nullopt;
  const Step* s = *(it - 1);
  if (t < s->end_ps) return s->number;
  return std::nullopt;
}

}  // namespace jaxprof
