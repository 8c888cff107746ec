#include "jaxprof/analysis/steps.h"

#include <algorithm>
#include <map>
#include <optional>

#include "jaxprof/analysis/module_executions.h"

namespace jaxprof {

namespace {

struct Marked {
  Step step;
  uint32_t host = 0;
};

// StepTraceAnnotation events: host events that carry a step_num stat (on the thread that runs
// the step loop). Whether a metadata entry's events do is decided by its first event, as for GPU
// launches: annotations always carry it, the other host events never do.
std::vector<Marked> host_annotations(const Profile& p) {
  std::vector<uint32_t> lines;
  for (const Plane& plane : p.planes)
    if (plane.kind == PlaneKind::kHostCpu)
      lines.insert(lines.end(), plane.lines.begin(), plane.lines.end());
  p.require_lines(lines);
  const StringId names[1] = {p.strings.find("step_num")};
  enum : uint8_t { kUnknown, kStep, kOther };
  std::vector<uint8_t> kind(p.event_metadata.size(), kUnknown);
  std::vector<Marked> out;
  for (uint32_t li : lines) {
    const Line& line = p.lines[li];
    for (uint32_t e = line.first_event; e < line.first_event + line.event_count; ++e) {
      uint32_t m = p.events.metadata[e];
      if (kind[m] == kOther) continue;
      std::optional<int64_t> number;
      if (!p.event_name(e).starts_with('$')) {  // Python tracer frames carry no stats
        std::optional<StatValue> v[1];
        p.find_event_stats(line.plane, e, names, v);
        if (v[0]) number = v[0]->as_int();
      }
      if (kind[m] == kUnknown) kind[m] = number ? kStep : kOther;
      if (!number) continue;
      Marked& s = out.emplace_back();
      s.host = p.planes[line.plane].host;
      s.step.number = *number;
      s.step.name = std::string(p.event_name(e));
      s.step.start_ps = p.events.start_ps[e];
      s.step.end_ps = p.events.end_ps(e);
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const Marked& a, const Marked& b) {
    return a.step.start_ps < b.step.start_ps;
  });
  return out;
}

}  // namespace

StepsResult compute_steps(const Profile& p) {
  StepsResult r;
  std::vector<Marked> marked = host_annotations(p);
  r.source = marked.empty() ? "none" : "host-annotation";
  if (marked.empty()) return r;
  // Each module execution goes to the step of its host in which it starts; steps of one host
  // do not overlap (StepTraceAnnotation scopes are sequential), so the latest-starting one.
  std::vector<std::map<std::pair<std::string, ProgramId>, StepModule>> modules(marked.size());
  for (const DeviceExecutions& d : module_executions(p)) {
    uint32_t host = p.planes[d.plane].host;
    for (const ModuleExecution& x : d.executions) {
      auto it = std::upper_bound(marked.begin(), marked.end(), x.start_ps,
                                 [&](int64_t t, const Marked& s) { return t < s.step.start_ps; });
      while (it != marked.begin() && (it - 1)->host != host) --it;
      if (it == marked.begin()) continue;
      size_t si = static_cast<size_t>(it - marked.begin()) - 1;
      Step& s = marked[si].step;
      if (x.start_ps >= s.end_ps) continue;
      ++s.executions;
      s.device_ps += x.duration_ps();
      s.device_end_ps = std::max(s.device_end_ps, x.end_ps);
      s.warmup = s.warmup || x.warmup;
      StepModule& m = modules[si][{x.name, x.program_id}];
      m.name = x.name;
      m.program_id = x.program_id;
      ++m.executions;
      m.device_ps += x.duration_ps();
    }
  }
  for (size_t i = 0; i < marked.size(); ++i) {
    Step& s = marked[i].step;
    for (auto& [key, m] : modules[i]) s.modules.push_back(std::move(m));
    std::stable_sort(
        s.modules.begin(), s.modules.end(),
        [](const StepModule& a, const StepModule& b) { return a.device_ps > b.device_ps; });
    r.steps.push_back(std::move(s));
  }
  std::vector<const Step*> steady;
  for (const Step& s : r.steps)
    if (!s.warmup) steady.push_back(&s);
  if (steady.empty())
    for (const Step& s : r.steps) steady.push_back(&s);
  r.steady_steps = steady.size();
  for (const Step* s : steady) {
    r.steady_mean_ps += static_cast<double>(s->duration_ps());
    r.steady_device_mean_ps += static_cast<double>(s->device_ps);
  }
  r.steady_mean_ps /= static_cast<double>(steady.size());
  r.steady_device_mean_ps /= static_cast<double>(steady.size());
  return r;
}

}  // namespace jaxprof
