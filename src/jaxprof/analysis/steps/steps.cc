#include "jaxprof/analysis/steps/steps.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <optional>
#include <string_view>
#include <tuple>
#include <unordered_map>

#include "jaxprof/analysis/compile/compile.h"
#include "jaxprof/analysis/partial/extract_partials.h"
#include "jaxprof/analysis/partial/partial_build.h"
#include "jaxprof/analysis/timeline/intervals.h"

namespace jaxprof {

namespace {

// Whether events of the plane may carry a stat of that name: the lines of a plane whose file
// declares no such stat need not be decoded. A source that declares no stats (a Chrome trace,
// jaxprof's own export among them) may carry any.
bool may_have_stat(const Profile& p, uint32_t plane, StringId name) {
  return name != UINT32_MAX && p.plane_may_have_stat(plane, p.strings[name]);
}

// StepTraceAnnotation events: host events that carry a step_num stat (on the thread that runs
// the step loop). Whether a metadata entry's events do is decided by its first event, as for GPU
// launches: annotations always carry it, the other host events never do. Per host, by start.
std::vector<std::vector<Step>> host_annotations(const Profile& p) {
  std::vector<std::vector<Step>> out(p.hosts.size());
  const StringId names[1] = {p.strings.find("step_num")};
  std::vector<uint32_t> lines;
  for (uint32_t pi = 0; pi < p.planes.size(); ++pi)
    if (p.planes[pi].kind == PlaneKind::kHostCpu && may_have_stat(p, pi, names[0]))
      lines.insert(lines.end(), p.planes[pi].lines.begin(), p.planes[pi].lines.end());
  if (lines.empty()) return out;
  p.require_lines(lines);
  enum : uint8_t { kUnknown, kStep, kOther };
  std::vector<uint8_t> kind(p.event_metadata.size(), kUnknown);
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
      Step& s = out[p.planes[line.plane].host].emplace_back();
      s.number = *number;
      s.name = std::string(p.event_name(e));
      s.start_ps = p.events.start_ps[e];
      s.end_ps = p.events.end_ps(e);
      s.longest_window_ps = s.duration_ps();
    }
  }
  for (std::vector<Step>& steps : out)
    std::stable_sort(steps.begin(), steps.end(),
                     [](const Step& a, const Step& b) { return a.start_ps < b.start_ps; });
  return out;
}

// A step window of one device plane (number, name, span).
struct DeviceMark {
  uint32_t plane = 0;
  int64_t number = 0;
  std::string name;
  int64_t start_ps = 0, end_ps = 0;
};

// One host's device marks as steps: one per number, spanning its earliest start to its latest
// end over the host's devices, by start (equal starts by number).
void merge_device_marks(std::vector<DeviceMark> marks, uint32_t first_plane, int64_t shift,
                        HostPartial& h) {
  PartialSteps& out = h.steps;
  std::map<int64_t, size_t> index;  // number -> step
  std::vector<Step> steps;
  for (const DeviceMark& m : marks) {
    auto [it, inserted] = index.try_emplace(m.number, steps.size());
    if (inserted) {
      Step& s = steps.emplace_back();
      s.number = m.number;
      s.name = m.name;
      s.start_ps = m.start_ps;
      s.end_ps = m.end_ps;
      s.longest_window_ps = m.end_ps - m.start_ps;
    } else {
      Step& s = steps[it->second];
      s.start_ps = std::min(s.start_ps, m.start_ps);
      s.end_ps = std::max(s.end_ps, m.end_ps);
      s.longest_window_ps = std::max(s.longest_window_ps, m.end_ps - m.start_ps);
      ++s.windows;
    }
  }
  std::vector<std::pair<int64_t, size_t>> keyed(index.begin(), index.end());
  std::stable_sort(keyed.begin(), keyed.end(), [&](const auto& a, const auto& b) {
    return steps[a.second].start_ps < steps[b.second].start_ps;
  });
  std::vector<uint32_t> rank(steps.size());
  for (auto& [number, i] : keyed) {
    rank[i] = static_cast<uint32_t>(out.steps.size());
    const Step& s = steps[i];
    out.steps.push_back({s.number, h.strings.id(s.name), s.start_ps - shift, s.end_ps - shift,
                         s.windows, s.longest_window_ps});
  }
  for (const DeviceMark& m : marks)
    out.windows.push_back({static_cast<int64_t>(m.plane - first_plane), m.start_ps - shift,
                           m.end_ps - shift, rank[index.at(m.number)]});
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
std::vector<DeviceMark> steps_lines(const Profile& p, const std::vector<uint8_t>& hosts) {
  const StringId steps_name = p.strings.find("Steps");
  std::vector<uint32_t> lines;
  for (const Plane& plane : p.planes) {
    if (!is_device_plane(plane.kind) || !hosts[plane.host]) continue;
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
  return marks;
}

// group_id stats on device events (what XProf's step grouping writes; the Steps lines above are
// derived from them): a step of a device spans its events with that group id, from the earliest
// start to the latest end. Host events are left out: they also group input-pipeline functions.
std::vector<DeviceMark> group_ids(const Profile& p, const std::vector<uint8_t>& hosts) {
  const StringId names[1] = {p.strings.find("group_id")};
  std::vector<uint32_t> lines;
  for (uint32_t pi = 0; pi < p.planes.size(); ++pi) {
    const Plane& plane = p.planes[pi];
    if (is_device_plane(plane.kind) && hosts[plane.host] && may_have_stat(p, pi, names[0]))
      lines.insert(lines.end(), plane.lines.begin(), plane.lines.end());
  }
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
  return marks;
}

// Marks the steps during which their host compiled (a compile's wall time, on the launching
// thread, overlaps the step's span): the step's time holds the compile, so it is not steady, as
// the execution that follows a compile is not (module_executions.h). Steps hold times on the
// host's clock.
void mark_compiling_steps(PartialBuild& b) {
  const std::vector<PartialCompile>& compiles = compile_totals_by_host(b.p);
  for (uint32_t h = 0; h < b.hosts.size() && h < compiles.size(); ++h) {
    std::vector<PartialStep>& steps = b.hosts[h].steps.steps;
    if (steps.empty() || compiles[h].records.empty()) continue;
    const int64_t shift = b.shift_ps(h);
    std::vector<Interval> compiling;
    for (const CompileRecord& c : compiles[h].records)
      compiling.push_back({c.start_ps - shift, c.start_ps - shift + c.wall_ps});
    merge_intervals(compiling);
    for (PartialStep& s : steps) {
      // The first compile window that ends after the step starts (merged: ends ascend).
      auto it = std::upper_bound(compiling.begin(), compiling.end(), s.start_ps,
                                 [](int64_t t, const Interval& c) { return t < c.end; });
      s.compiling = it != compiling.end() && it->begin < s.end_ps;
    }
  }
}

}  // namespace

void extract_steps(PartialBuild& b) {
  const Profile& p = b.p;
  std::vector<uint32_t> first_plane(p.hosts.size(), UINT32_MAX);
  for (uint32_t pi = 0; pi < p.planes.size(); ++pi)
    first_plane[p.planes[pi].host] = std::min(first_plane[p.planes[pi].host], pi);
  // Each host's first source that marks any step, most explicit first (docs/modules.md, Steps).
  std::vector<std::vector<Step>> annotations = host_annotations(p);
  std::vector<uint8_t> open(p.hosts.size(), 0);
  for (uint32_t h = 0; h < p.hosts.size(); ++h) {
    HostPartial& host = b.hosts[h];
    if (annotations[h].empty()) {
      open[h] = 1;
      continue;
    }
    const int64_t shift = b.shift_ps(h);
    host.steps.source = StepSource::kHostAnnotation;
    for (const Step& s : annotations[h]) {
      host.steps.windows.push_back({-1, s.start_ps - shift, s.end_ps - shift,
                                    static_cast<uint32_t>(host.steps.steps.size())});
      host.steps.steps.push_back({s.number, host.strings.id(s.name), s.start_ps - shift,
                                  s.end_ps - shift, s.windows, s.longest_window_ps});
    }
  }
  for (StepSource source : {StepSource::kStepsLine, StepSource::kGroupId}) {
    if (std::find(open.begin(), open.end(), 1) == open.end()) break;
    std::vector<std::vector<DeviceMark>> by_host(p.hosts.size());
    for (DeviceMark& m :
         source == StepSource::kStepsLine ? steps_lines(p, open) : group_ids(p, open))
      by_host[p.planes[m.plane].host].push_back(std::move(m));
    for (uint32_t h = 0; h < p.hosts.size(); ++h) {
      if (!open[h] || by_host[h].empty()) continue;
      open[h] = 0;
      b.hosts[h].steps.source = source;
      merge_device_marks(std::move(by_host[h]), first_plane[h], b.shift_ps(h), b.hosts[h]);
    }
  }
  mark_compiling_steps(b);
}

StepsResult steps_from_partials(const PartialSet& set, bool with_modules) {
  set.require(kPartSteps | kPartExecutions, "steps");
  StepsResult r;
  // Each host's steps and windows (a few per step), read one host at a time.
  struct HostSteps {
    PartialSteps steps;
    std::vector<std::string> names;  // per step
  };
  std::vector<HostSteps> hosts(set.size());
  StepSource source = StepSource::kNone;
  set.for_each_host(
      [&](uint32_t hi, const HostPartial& h) {
        if (h.steps.steps.empty()) return;
        source = std::min(source, h.steps.source);
        hosts[hi].steps = h.steps;
        for (const PartialStep& ps : h.steps.steps) hosts[hi].names.emplace_back(h.str(ps.name));
      },
      kPartSteps);
  r.source = step_source_name(source);
  if (source == StepSource::kNone) return r;

  // The hosts' steps on one clock, by start (equal starts in host order).
  struct Ref {
    uint32_t host, step;
  };
  std::vector<Ref> order;
  std::vector<std::vector<size_t>> rank(hosts.size());
  for (uint32_t hi = 0; hi < hosts.size(); ++hi) {
    const PartialSteps& h = hosts[hi].steps;
    if (h.source != source) continue;
    for (uint32_t si = 0; si < h.steps.size(); ++si) order.push_back({hi, si});
  }
  auto start = [&](const Ref& x) {
    return hosts[x.host].steps.steps[x.step].start_ps + set.shift_ps(x.host);
  };
  std::stable_sort(order.begin(), order.end(),
                   [&](const Ref& a, const Ref& b) { return start(a) < start(b); });
  for (uint32_t hi = 0; hi < hosts.size(); ++hi) rank[hi].resize(hosts[hi].steps.steps.size());
  std::vector<Step> steps(order.size());
  for (size_t i = 0; i < order.size(); ++i) {
    const PartialStep& ps = hosts[order[i].host].steps.steps[order[i].step];
    const int64_t shift = set.shift_ps(order[i].host);
    rank[order[i].host][order[i].step] = i;
    Step& s = steps[i];
    s.number = ps.number;
    s.name = hosts[order[i].host].names[order[i].step];
    s.start_ps = ps.start_ps + shift;
    s.end_ps = ps.end_ps + shift;
    s.windows = ps.windows;
    s.longest_window_ps = ps.longest_window_ps;
    s.compiling = ps.compiling;
    s.warmup = ps.compiling;
    s.host = order[i].host;
  }

  // Each module execution goes to the window of its scope (its host or its device plane) in which
  // it starts; windows of one scope are taken not to overlap (StepTraceAnnotation scopes are
  // sequential), so the latest-starting one.
  struct Window {
    int64_t start_ps, end_ps;
    size_t step;
  };
  std::vector<std::map<std::pair<std::string, ProgramId>, StepModule>> modules(steps.size());
  std::map<std::pair<uint32_t, int64_t>, std::vector<Window>> windows;  // (host, plane or -1)
  for (uint32_t hi = 0; hi < hosts.size(); ++hi) {
    const PartialSteps& h = hosts[hi].steps;
    if (h.source != source) continue;
    for (const PartialStepWindow& w : h.windows)
      windows[{hi, w.plane}].push_back({w.start_ps, w.end_ps, rank[hi][w.step]});
  }
  hosts.clear();
  for (auto& [scope, w] : windows)
    std::stable_sort(w.begin(), w.end(),
                     [](const Window& a, const Window& b) { return a.start_ps < b.start_ps; });
  const bool by_device = source != StepSource::kHostAnnotation;
  set.for_each_device(
      [&](const PartialSet::DeviceRef& ref, const HostPartial& h, const PartialDevice& d) {
        auto wit = windows.find({ref.host, by_device ? static_cast<int64_t>(d.plane) : -1});
        if (wit == windows.end()) return;
        const std::vector<Window>& ws = wit->second;
        const int64_t shift = set.shift_ps(ref.host);
        for (const PartialExecution& x : d.executions) {
          auto it = std::upper_bound(ws.begin(), ws.end(), x.start_ps,
                                     [](int64_t t, const Window& w) { return t < w.start_ps; });
          if (it == ws.begin()) continue;
          const Window& w = *(it - 1);
          if (x.start_ps >= w.end_ps) continue;
          Step& s = steps[w.step];
          const int64_t duration = x.end_ps - x.start_ps;
          ++s.executions;
          s.device_ps += duration;
          s.device_end_ps = std::max(s.device_end_ps, x.end_ps + shift);
          s.warmup = s.warmup || x.warmup;
          if (!with_modules) continue;
          const std::string name(h.module_name(x.module));
          const ProgramId program = h.modules[x.module].program_id;
          StepModule& m = modules[w.step][{name, program}];
          m.name = name;
          m.program_id = program;
          ++m.executions;
          m.device_ps += duration;
        }
      },
      kPartExecutions);
  for (size_t i = 0; i < steps.size(); ++i) {
    Step& s = steps[i];
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

std::vector<uint32_t> step_occurrences(const std::vector<Step>& steps) {
  std::map<std::tuple<uint32_t, int64_t, std::string_view>, uint32_t> seen;
  std::vector<uint32_t> out;
  out.reserve(steps.size());
  for (const Step& s : steps) out.push_back(seen[{s.host, s.number, s.name}]++);
  return out;
}

StepsResult compute_steps(const Profile& p) {
  PartialExtractOptions extract;
  extract.parts = kPartSteps;
  return steps_from_partials(PartialSet(extract_partials(p, extract)));
}

}  // namespace jaxprof
