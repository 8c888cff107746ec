#include "jaxprof/analysis/steps.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <optional>
#include <unordered_map>

#include "jaxprof/analysis/module_executions.h"

namespace jaxprof {

namespace {

// One step's span as one scope saw it: a host (annotations) or a device (Steps lines, group ids).
// Module executions go to the window of their scope they start in.
struct Window {
  int64_t start_ps = 0, end_ps = 0;
  size_t step = 0;  // index into the steps being built
};

struct Marks {
  std::vector<Step> steps;
  bool by_device = false;  // windows are keyed by device plane, else by host
  std::unordered_map<uint32_t, std::vector<Window>> windows;
};

// Whether the plane declares a stat of that name: events of a plane that does not cannot carry it,
// so their lines need not be decoded.
bool declares_stat(const Plane& plane, StringId name) {
  for (const auto& [id, n] : plane.stat_names)
    if (n == name) return true;
  return false;
}

// StepTraceAnnotation events: host events that carry a step_num stat (on the thread that runs
// the step loop). Whether a metadata entry's events do is decided by its first event, as for GPU
// launches: annotations always carry it, the other host events never do.
Marks host_annotations(const Profile& p) {
  Marks out;
  const StringId names[1] = {p.strings.find("step_num")};
  std::vector<uint32_t> lines;
  for (const Plane& plane : p.planes)
    if (plane.kind == PlaneKind::kHostCpu && declares_stat(plane, names[0]))
      lines.insert(lines.end(), plane.lines.begin(), plane.lines.end());
  if (lines.empty()) return out;
  p.require_lines(lines);
  enum : uint8_t { kUnknown, kStep, kOther };
  std::vector<uint8_t> kind(p.event_metadata.size(), kUnknown);
  std::vector<std::pair<Step, uint32_t>> found;  // with its host
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
      auto& [s, host] = found.emplace_back();
      host = p.planes[line.plane].host;
      s.number = *number;
      s.name = std::string(p.event_name(e));
      s.start_ps = p.events.start_ps[e];
      s.end_ps = p.events.end_ps(e);
      s.longest_window_ps = s.duration_ps();
    }
  }
  std::stable_sort(found.begin(), found.end(), [](const auto& a, const auto& b) {
    return a.first.start_ps < b.first.start_ps;
  });
  for (auto& [s, host] : found) {
    out.windows[host].push_back(Window{s.start_ps, s.end_ps, out.steps.size()});
    out.steps.push_back(std::move(s));
  }
  return out;
}

// Per-device step windows (device plane, number, name, span), merged into one step per (host,
// number): it spans its earliest start to its latest end over the host's devices.
struct DeviceMark {
  uint32_t plane = 0;
  int64_t number = 0;
  std::string name;
  int64_t start_ps = 0, end_ps = 0;
};

Marks merge_device_marks(const Profile& p, std::vector<DeviceMark> marks) {
  Marks out;
  out.by_device = true;
  std::map<std::pair<uint32_t, int64_t>, size_t> index;  // (host, number) -> step
  for (const DeviceMark& m : marks) {
    auto [it, inserted] = index.try_emplace({p.planes[m.plane].host, m.number}, out.steps.size());
    if (inserted) {
      Step& s = out.steps.emplace_back();
      s.number = m.number;
      s.name = m.name;
      s.start_ps = m.start_ps;
      s.end_ps = m.end_ps;
      s.longest_window_ps = m.end_ps - m.start_ps;
    } else {
      Step& s = out.steps[it->second];
      s.start_ps = std::min(s.start_ps, m.start_ps);
      s.end_ps = std::max(s.end_ps, m.end_ps);
      s.longest_window_ps = std::max(s.longest_window_ps, m.end_ps - m.start_ps);
      ++s.windows;
    }
  }
  // By start; equal starts by host, then number, so the order does not depend on plane order.
  std::vector<std::pair<std::pair<uint32_t, int64_t>, size_t>> keyed(index.begin(), index.end());
  std::stable_sort(keyed.begin(), keyed.end(), [&](const auto& a, const auto& b) {
    return out.steps[a.second].start_ps < out.steps[b.second].start_ps;
  });
  std::vector<size_t> rank(out.steps.size());
  std::vector<Step> sorted;
  for (auto& [key, i] : keyed) {
    rank[i] = sorted.size();
    sorted.push_back(std::move(out.steps[i]));
  }
  out.steps = std::move(sorted);
  for (const DeviceMark& m : marks) {
    size_t step = rank[index.at({p.planes[m.plane].host, m.number})];
    out.windows[m.plane].push_back(Window{m.start_ps, m.end_ps, step});
  }
  for (auto& [plane, w] : out.windows)
    std::stable_sort(w.begin(), w.end(),
                     [](const Window& a, const Window& b) { return a.start_ps < b.start_ps; });
  return out;
}

std::optional<int64_t> integer(std::string_view s) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

// Lines named "Steps" on device planes (TPU device traces; TensorFlow's profiler derives them on
// GPU): each event is one step of that device. Its number: the event's group_id stat, else its
// step_num, else its name when that is an integer, else its position on the line.
Marks steps_lines(const Profile& p) {
  const StringId steps_name = p.strings.find("Steps");
  std::vector<uint32_t> lines;
  for (const Plane& plane : p.planes) {
    if (!is_device_plane(plane.kind)) continue;
    for (uint32_t li : plane.lines)
      if (p.lines[li].name == steps_name && p.lines[li].event_count > 0) lines.push_back(li);
  }
  if (lines.empty()) return {};
  p.require_lines(lines);
  const StringId names[3] = {p.strings.find("group_id"), p.strings.find("step_num"),
                             p.strings.find("step_name")};
  std::vector<DeviceMark> marks;
  for (uint32_t li : lines) {
    const Line& line = p.lines[li];
    for (uint32_t e = line.first_event; e < line.first_event + line.event_count; ++e) {
      std::optional<StatValue> v[3];
      p.find_event_stats(line.plane, e, names, v);
      DeviceMark& m = marks.emplace_back();
      m.plane = line.plane;
      std::optional<int64_t> n;
      if (v[0]) n = v[0]->as_int();
      if (!n && v[1]) n = v[1]->as_int();
      if (!n) n = integer(p.event_name(e));
      m.number = n ? *n : static_cast<int64_t>(e - line.first_event);
      m.name = v[2] && v[2]->is_text() ? v[2]->str : std::string(p.event_display_name(e));
      m.start_ps = p.events.start_ps[e];
      m.end_ps = p.events.end_ps(e);
    }
  }
  return merge_device_marks(p, std::move(marks));
}

// group_id stats on device events (what XProf's step grouping writes; the Steps lines above are
// derived from them): a step of a device spans its events with that group id, from the earliest
// start to the latest end. Host events are left out: they also group input-pipeline functions.
Marks group_ids(const Profile& p) {
  const StringId names[1] = {p.strings.find("group_id")};
  std::vector<uint32_t> lines;
  for (const Plane& plane : p.planes)
    if (is_device_plane(plane.kind) && declares_stat(plane, names[0]))
      lines.insert(lines.end(), plane.lines.begin(), plane.lines.end());
  if (lines.empty()) return {};
  p.require_lines(lines);
  std::map<std::pair<uint32_t, int64_t>, DeviceMark> spans;  // (plane, group) -> span
  for (uint32_t li : lines) {
    const Line& line = p.lines[li];
    for (uint32_t e = line.first_event; e < line.first_event + line.event_count; ++e) {
      std::optional<StatValue> v[1];
      p.find_event_stats(line.plane, e, names, v);
      std::optional<int64_t> g = v[0] ? v[0]->as_int() : std::nullopt;
      if (!g) continue;
      auto [it, inserted] = spans.try_emplace({line.plane, *g});
      DeviceMark& m = it->second;
      if (inserted) {
        m.plane = line.plane;
        m.number = *g;
        m.start_ps = p.events.start_ps[e];
        m.end_ps = p.events.end_ps(e);
      } else {
        m.start_ps = std::min(m.start_ps, p.events.start_ps[e]);
        m.end_ps = std::max(m.end_ps, p.events.end_ps(e));
      }
    }
  }
  std::vector<DeviceMark> marks;
  for (auto& [key, m] : spans) marks.push_back(std::move(m));
  return merge_device_marks(p, std::move(marks));
}

}  // namespace

StepsResult compute_steps(const Profile& p) {
  StepsResult r;
  // The first source that marks any step, most explicit first (docs/modules.md, Steps).
  Marks marks = host_annotations(p);
  r.source = "host-annotation";
  if (marks.steps.empty()) {
    marks = steps_lines(p);
    r.source = "steps-line";
  }
  if (marks.steps.empty()) {
    marks = group_ids(p);
    r.source = "group-id";
  }
  if (marks.steps.empty()) {
    r.source = "none";
    return r;
  }
  // Each module execution goes to the window of its scope (its host or its device) in which it
  // starts; windows of one scope are taken not to overlap (StepTraceAnnotation scopes are
  // sequential), so the latest-starting one.
  std::vector<std::map<std::pair<std::string, ProgramId>, StepModule>> modules(marks.steps.size());
  for (const DeviceExecutions& d : module_executions(p)) {
    auto wit = marks.windows.find(marks.by_device ? d.plane : p.planes[d.plane].host);
    if (wit == marks.windows.end()) continue;
    const std::vector<Window>& windows = wit->second;
    for (const ModuleExecution& x : d.executions) {
      auto it = std::upper_bound(windows.begin(), windows.end(), x.start_ps,
                                 [](int64_t t, const Window& w) { return t < w.start_ps; });
      if (it == windows.begin()) continue;
      const Window& w = *(it - 1);
      if (x.start_ps >= w.end_ps) continue;
      Step& s = marks.steps[w.step];
      ++s.executions;
      s.device_ps += x.duration_ps();
      s.device_end_ps = std::max(s.device_end_ps, x.end_ps);
      s.warmup = s.warmup || x.warmup;
      StepModule& m = modules[w.step][{x.name, x.program_id}];
      m.name = x.name;
      m.program_id = x.program_id;
      ++m.executions;
      m.device_ps += x.duration_ps();
    }
  }
  for (size_t i = 0; i < marks.steps.size(); ++i) {
    Step& s = marks.steps[i];
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
