#include "jaxprof/analysis/module_executions.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <map>
#include <set>
#include <unordered_map>

#include "jaxprof/analysis/device_events.h"
#include "jaxprof/analysis/line_filter.h"
#include "jaxprof/model/metadata_stat_cache.h"

namespace jaxprof {

const char* execution_source_name(ExecutionSource s) {
  switch (s) {
    case ExecutionSource::kNone:
      return "none";
    case ExecutionSource::kModuleLine:
      return "module-line";
    case ExecutionSource::kRunId:
      return "run-id";
    case ExecutionSource::kHostLaunch:
      return "host-launch";
    case ExecutionSource::kConsecutive:
      return "consecutive";
  }
  return "none";
}

namespace {

// The host event that spans one execution of a GPU executable on its launching thread.
constexpr std::string_view kGpuExecuteEvent = "GpuExecutable::ExecuteThunks";

struct Window {
  int64_t begin = 0, end = 0;
};

// Host side of one host's GPU devices: where each kernel was launched, and the executions
// (ExecuteThunks events) of each host thread.
struct HostLaunches {
  struct Launch {
    uint32_t line = 0;
    int64_t time = 0;
  };
  std::unordered_map<int64_t, Launch> by_correlation;
  std::vector<Window> windows;                                  // global window ids
  std::unordered_map<uint32_t, std::vector<uint32_t>> by_line;  // window line -> ids, by begin
  // Launch events are recorded on their own lines (per OS thread id) while ExecuteThunks sits on
  // the TraceMe line of the same thread, under another id: pair them by containment.
  std::unordered_map<uint32_t, uint32_t> window_line_of;
  bool all_lines = false;  // read from every host line, not only the likely ones

  // The execution window that contains the launch of the kernel with this correlation id.
  std::optional<uint32_t> window_of(int64_t correlation) const {
    auto it = by_correlation.find(correlation);
    if (it == by_correlation.end()) return std::nullopt;
    auto t = window_line_of.find(it->second.line);
    if (t == window_line_of.end()) return std::nullopt;
    return containing(by_line.at(t->second), it->second.time);
  }

  std::optional<uint32_t> containing(const std::vector<uint32_t>& ids, int64_t time) const {
    auto it = std::upper_bound(ids.begin(), ids.end(), time,
                               [&](int64_t t, uint32_t w) { return t < windows[w].begin; });
    if (it == ids.begin()) return std::nullopt;
    uint32_t w = *(it - 1);
    if (time > windows[w].end) return std::nullopt;
    return w;
  }
};

// Reads two integer stats of many events without decoding the rest of their stats: the event's
// own, else its metadata's (as Profile::find_event_stats), the latter read once per metadata.
class TwoStats {
 public:
  TwoStats(const Profile& p, std::string_view a, std::string_view b)
      : p_(p), metadata_(p, {p.strings.find(a), p.strings.find(b)}) {}
  std::pair<std::optional<int64_t>, std::optional<int64_t>> operator()(uint32_t plane, uint32_t e) {
    return (*this)(plane, ScannedEvent{.metadata = p_.events.metadata[e], .event = e});
  }
  std::pair<std::optional<int64_t>, std::optional<int64_t>> operator()(uint32_t plane,
                                                                       const ScannedEvent& e) {
    std::optional<StatValue> v[2];
    p_.find_own_event_stats(plane, e, metadata_.names(), v);
    if (!v[0] || !v[1]) metadata_.fill_gaps(e.metadata, v);
    auto as_int = [](const std::optional<StatValue>& s) {
      return s ? s->as_int() : std::optional<int64_t>();
    };
    return {as_int(v[0]), as_int(v[1])};
  }

 private:
  const Profile& p_;
  MetadataStatCache<2> metadata_;
};

// GPU runtime and driver calls as the tracers name them (cuLaunchKernel, cudaMemcpyAsync,
// hipModuleLaunchKernel): the usual carriers of correlation ids on the host.
bool is_gpu_api_name(std::string_view name) {
  for (std::string_view prefix : {"cuda", "cu", "hip"})
    if (name.size() > prefix.size() && name.starts_with(prefix) &&
        std::isupper(static_cast<unsigned char>(name[prefix.size()])))
      return true;
  return false;
}

// `lines`: the host lines to read, in line order. `all`: every host line, or only those that may
// hold ExecuteThunks events or GPU API calls.
HostLaunches index_host_launches(const Profile& p, uint32_t host, bool all) {
  HostLaunches h;
  std::vector<uint32_t> lines;
  LineFilter wanted(p);
  if (!all)
    for (uint32_t m = 0; m < p.event_metadata.size(); ++m) {
      const EventMetadata& md = p.event_metadata[m];
      const Plane& plane = p.planes[md.plane];
      if (plane.kind != PlaneKind::kHostCpu || plane.host != host) continue;
      std::string_view name = p.str(md.name);
      if (name == kGpuExecuteEvent || is_gpu_api_name(name)) wanted.want(m);
    }
  for (const Plane& plane : p.planes)
    if (plane.kind == PlaneKind::kHostCpu && plane.host == host)
      for (uint32_t li : plane.lines)
        if (all || wanted.may_hold(li)) lines.push_back(li);
  h.all_lines = all;
  std::unordered_map<uint32_t, std::vector<Window>> raw;
  // Whether events of a metadata entry carry a correlation id is decided by its first event:
  // launch APIs always do, the millions of other host events never do, and reading stats from
  // the file is the expensive part.
  enum : uint8_t { kUnknown, kLaunch, kOther };
  TwoStats correlation(p, "correlation_id", "correlation_id");
  std::vector<uint8_t> kind(p.event_metadata.size(), kUnknown);
  // The lines are scanned, not decoded: on the threads that run executables, the few
  // ExecuteThunks events are all that is read of a busy line once its other kinds are known.
  std::vector<ScannedEvent> events;
  std::vector<uint8_t> want(p.event_metadata.size(), 1);  // kind[m] != kOther
  for (uint32_t li : lines) {
    const Line& line = p.lines[li];
    p.scan_line(li, want, events);
    for (const ScannedEvent& e : events) {
      uint32_t m = e.metadata;
      if (kind[m] == kOther) continue;
      std::string_view name = p.str(p.event_metadata[m].name);
      if (name == kGpuExecuteEvent) {
        raw[li].push_back({e.start_ps, e.start_ps + e.duration_ps});
        continue;
      }
      bool found = false;
      if (!name.starts_with('$')) {  // Python tracer frames carry no stats
        if (auto corr = correlation(line.plane, e).first) {
          h.by_correlation[*corr] = {li, e.start_ps};
          found = true;
        }
      }
      if (kind[m] == kUnknown) {
        kind[m] = found ? kLaunch : kOther;
        want[m] = found;
      }
    }
  }
  for (auto& [li, ws] : raw) {
    std::sort(ws.begin(), ws.end(), [](const Window& a, const Window& b) {
      return a.begin != b.begin ? a.begin < b.begin : a.end > b.end;
    });
    std::vector<uint32_t>& ids = h.by_line[li];
    for (const Window& w : ws) {
      // Keep the outermost of nested windows so that a thread's windows are disjoint.
      if (!ids.empty() && w.begin <= h.windows[ids.back()].end) continue;
      ids.push_back(static_cast<uint32_t>(h.windows.size()));
      h.windows.push_back(w);
    }
  }
  if (h.windows.empty()) return h;
  // Each launch line goes with the window line whose windows contain most of its launches.
  std::map<std::pair<uint32_t, uint32_t>, uint64_t> hits;
  for (const auto& [corr, launch] : h.by_correlation)
    for (const auto& [wl, ids] : h.by_line)
      if (h.containing(ids, launch.time)) ++hits[{launch.line, wl}];
  std::unordered_map<uint32_t, uint64_t> best;
  for (const auto& [key, n] : hits) {
    auto [it, inserted] = best.try_emplace(key.first, n);
    if (inserted || n > it->second) {
      it->second = n;
      h.window_line_of[key.first] = key.second;
    }
  }
  return h;
}

// Groups op events into executions: events with a key (window or run id) go to the execution of
// (module, key); events without one continue the previous event's execution when module and
// group id agree.
class Grouper {
 public:
  explicit Grouper(const Profile& p) : p_(p) {}

  void add(uint32_t e, std::optional<int64_t> key, std::optional<int64_t> group) {
    uint32_t module = p_.events.module[e];
    size_t target;
    if (key) {
      auto [it, inserted] = keyed_.try_emplace({module, *key}, execs_.size());
      if (inserted) open(module, group);
      target = it->second;
    } else if (last_ < execs_.size() && execs_[last_].module == module && groups_[last_] == group) {
      target = last_;
    } else {
      target = execs_.size();
      open(module, group);
    }
    ModuleExecution& x = execs_[target];
    if (x.events.empty()) {
      x.start_ps = p_.events.start_ps[e];
      x.end_ps = p_.events.end_ps(e);
    }
    x.start_ps = std::min(x.start_ps, p_.events.start_ps[e]);
    x.end_ps = std::max(x.end_ps, p_.events.end_ps(e));
    x.events.push_back(e);
    if (key && run_ids_) x.run_id = *key;
    last_ = target;
  }

  void keys_are_run_ids() { run_ids_ = true; }
  std::vector<ModuleExecution> take() { return std::move(execs_); }

 private:
  void open(uint32_t module, std::optional<int64_t> group) {
    ModuleExecution& x = execs_.emplace_back();
    x.module = module;
    groups_.push_back(group);
  }

  const Profile& p_;
  std::vector<ModuleExecution> execs_;
  std::vector<std::optional<int64_t>> groups_;
  std::map<std::pair<uint32_t, int64_t>, size_t> keyed_;
  size_t last_ = SIZE_MAX;
  bool run_ids_ = false;
};

// The device's op events with a module, by (start, index).
std::vector<uint32_t> module_events(const Profile& p, const DeviceLines& dev) {
  std::vector<uint32_t> out;
  for (uint32_t li : dev.lines) {
    const Line& line = p.lines[li];
    for (uint32_t e = line.first_event; e < line.first_event + line.event_count; ++e)
      if (p.events.module[e] != 0 && dev.counts(p.events, e)) out.push_back(e);
  }
  std::sort(out.begin(), out.end(), [&](uint32_t a, uint32_t b) {
    int64_t sa = p.events.start_ps[a], sb = p.events.start_ps[b];
    return sa != sb ? sa < sb : a < b;
  });
  return out;
}

// "jit_f(12190760917235803885)" -> ("jit_f", 12190760917235803885).
bool parse_module_event_name(std::string_view text, std::string& name, ProgramId& id) {
  if (!text.ends_with(')')) return false;
  size_t open = text.rfind('(');
  if (open == std::string_view::npos || open == 0) return false;
  std::string_view digits = text.substr(open + 1, text.size() - open - 2);
  uint64_t v = 0;
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
  if (ec != std::errc() || ptr != digits.data() + digits.size()) return false;
  name = std::string(text.substr(0, open));
  id = v;
  return true;
}

std::vector<ModuleExecution> from_module_line(const Profile& p, const DeviceLines& dev,
                                              uint32_t module_line) {
  p.require_lines({module_line});
  const Line& line = p.lines[module_line];
  std::vector<ModuleExecution> out;
  TwoStats run_id(p, "run_id", "run_id");
  // Name, program id and module index depend on the event metadata and module only: resolve each
  // pair once (nsys-jax module ranges share a metadata entry per name, not per program).
  std::unordered_map<uint64_t, size_t> first_of_kind;  // (metadata, module) -> an execution
  for (uint32_t e = line.first_event; e < line.first_event + line.event_count; ++e) {
    ModuleExecution& x = out.emplace_back();
    uint64_t kind = uint64_t(p.events.metadata[e]) << 32 | p.events.module[e];
    auto [seen, inserted] = first_of_kind.try_emplace(kind, out.size() - 1);
    if (inserted) {
      std::string_view label = p.event_name(e);
      bool module_from_event = false;
      if (!parse_module_event_name(label, x.name, x.program_id)) {
        x.name = std::string(label);
        // A label without the program id (nsys-jax module ranges): the event's own module.
        if (uint32_t m = p.events.module[e]; m != 0) {
          x.module = m;
          x.program_id = p.modules[m].program_id;
          module_from_event = true;
        }
      }
      // Module index by (name, program id), then by program id alone.
      for (uint32_t m = 1; m < p.modules.size() && !module_from_event; ++m) {
        if (p.modules[m].program_id != x.program_id) continue;
        if (x.module == 0 || p.str(p.modules[m].name) == x.name) x.module = m;
      }
    } else {
      const ModuleExecution& first = out[seen->second];
      x.name = first.name;
      x.program_id = first.program_id;
      x.module = first.module;
    }
    x.start_ps = p.events.start_ps[e];
    x.end_ps = p.events.end_ps(e);
    x.run_id = run_id(line.plane, e).first;
  }
  auto by_start = [](const ModuleExecution& a, const ModuleExecution& b) {
    return a.start_ps < b.start_ps;
  };
  // The line is in start order already, unless events were merged from several segments.
  if (!std::is_sorted(out.begin(), out.end(), by_start))
    std::stable_sort(out.begin(), out.end(), by_start);
  // An op belongs to the execution it starts in (executions on one core do not overlap).
  std::vector<int64_t> starts;
  for (const ModuleExecution& x : out) starts.push_back(x.start_ps);
  // (execution, event) in line order; counted first so that each execution's list is allocated
  // once.
  std::vector<std::pair<uint32_t, uint32_t>> placed;
  std::vector<uint32_t> counts(out.size(), 0);
  for (uint32_t li : dev.lines) {
    const Line& ol = p.lines[li];
    // The line's events come by start: the execution each starts in only moves forward.
    size_t next = 0;  // the first execution starting after the current event
    for (uint32_t e = ol.first_event; e < ol.first_event + ol.event_count; ++e) {
      int64_t t = p.events.start_ps[e];
      while (next < starts.size() && starts[next] <= t) ++next;
      if (next == 0) continue;
      ModuleExecution& x = out[next - 1];
      if (t >= x.end_ps) continue;
      uint32_t m = p.events.module[e];
      if (m != 0 && x.program_id != kNoProgram && p.modules[m].program_id != x.program_id) continue;
      placed.emplace_back(static_cast<uint32_t>(next - 1), e);
      ++counts[next - 1];
    }
  }
  for (size_t k = 0; k < out.size(); ++k) out[k].events.reserve(counts[k]);
  for (auto [k, e] : placed) out[k].events.push_back(e);
  auto event_by_start = [&](uint32_t a, uint32_t b) {
    int64_t sa = p.events.start_ps[a], sb = p.events.start_ps[b];
    return sa != sb ? sa < sb : a < b;
  };
  // From one op line they already are in order.
  for (ModuleExecution& x : out)
    if (!std::is_sorted(x.events.begin(), x.events.end(), event_by_start))
      std::sort(x.events.begin(), x.events.end(), event_by_start);
  return out;
}

void finish(const Profile& p, std::vector<ModuleExecution>& execs) {
  for (ModuleExecution& x : execs) {
    if (x.module == 0) continue;
    if (x.name.empty()) x.name = std::string(p.str(p.modules[x.module].name));
    if (x.program_id == kNoProgram) x.program_id = p.modules[x.module].program_id;
  }
  auto by_start = [](const ModuleExecution& a, const ModuleExecution& b) {
    return a.start_ps < b.start_ps;
  };
  if (!std::is_sorted(execs.begin(), execs.end(), by_start))
    std::stable_sort(execs.begin(), execs.end(), by_start);
  std::set<std::pair<std::string_view, ProgramId>> seen;  // names stay put in execs
  for (ModuleExecution& x : execs) x.warmup = seen.emplace(x.name, x.program_id).second;
}

std::vector<DeviceExecutions> compute_module_executions(const Profile& p) {
  std::vector<DeviceLines> devices = op_devices(p);
  std::vector<uint32_t> needed;
  for (const DeviceLines& dev : devices)
    needed.insert(needed.end(), dev.lines.begin(), dev.lines.end());
  p.require_lines(needed);

  std::map<uint32_t, HostLaunches> hosts;  // built on first use
  std::vector<DeviceExecutions> out;
  for (const DeviceLines& dev : devices) {
    DeviceExecutions& d = out.emplace_back();
    d.plane = dev.plane;
    d.device = dev.name;
    const Plane& plane = p.planes[dev.plane];

    std::optional<uint32_t> module_line;
    for (uint32_t li : plane.lines)
      if (p.lines[li].event_count > 0 && p.str(p.lines[li].name) == "XLA Modules") module_line = li;
    if (module_line && !dev.hlo_ops_only) {
      d.executions = from_module_line(p, dev, *module_line);
      d.source = ExecutionSource::kModuleLine;
      finish(p, d.executions);
      continue;
    }

    std::vector<uint32_t> events = module_events(p, dev);
    if (events.empty()) continue;
    Grouper grouper(p);
    if (dev.hlo_ops_only) {
      grouper.keys_are_run_ids();
      d.source = ExecutionSource::kRunId;
      TwoStats stats(p, "run_id", "group_id");
      for (uint32_t e : events) {
        auto [run, group] = stats(dev.plane, e);
        grouper.add(e, run, group);
      }
    } else {
      d.source = ExecutionSource::kConsecutive;
      TwoStats stats(p, "correlation_id", "group_id");
      std::vector<std::pair<std::optional<int64_t>, std::optional<int64_t>>> ids;
      ids.reserve(events.size());
      for (uint32_t e : events) ids.push_back(stats(dev.plane, e));
      // The host lines with ExecuteThunks events or GPU API calls first; every host line when
      // they miss a launch this device names (one recorded under another name).
      const HostLaunches* host = nullptr;
      bool any = false, missing = false;
      for (const auto& ids_of : ids) any |= ids_of.first.has_value();
      if (any) {
        auto it = hosts.find(plane.host);
        if (it == hosts.end())
          it = hosts.emplace(plane.host, index_host_launches(p, plane.host, false)).first;
        for (const auto& ids_of : ids)
          if (ids_of.first && !it->second.by_correlation.count(*ids_of.first)) missing = true;
        if (missing && !it->second.all_lines) it->second = index_host_launches(p, plane.host, true);
        host = &it->second;
      }
      for (size_t k = 0; k < events.size(); ++k) {
        uint32_t e = events[k];
        auto [corr, group] = ids[k];
        std::optional<int64_t> window;
        if (corr && host)
          if (auto w = host->window_of(*corr)) window = *w;
        if (window) d.source = ExecutionSource::kHostLaunch;
        grouper.add(e, window, group);
      }
    }
    d.executions = grouper.take();
    finish(p, d.executions);
  }
  return out;
}

}  // namespace

const std::vector<DeviceExecutions>& module_executions(const Profile& p) {
  return p.memo<std::vector<DeviceExecutions>>("module_executions",
                                               [&] { return compute_module_executions(p); });
}

}  // namespace jaxprof
