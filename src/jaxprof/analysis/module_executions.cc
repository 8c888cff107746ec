#include "jaxprof/analysis/module_executions.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <map>
#include <memory>
#include <set>
#include <unordered_map>

#include "jaxprof/analysis/device_events.h"
#include "jaxprof/analysis/line_filter.h"
#include "jaxprof/analysis/parallel_parts.h"
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

// Events worth a thread of their own: host events scanned for launches, op events read.
constexpr uint64_t kEventsPerPart = 100000;
constexpr uint64_t kOpEventsPerPart = 20000;

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
  using Values = std::pair<std::optional<int64_t>, std::optional<int64_t>>;

  TwoStats(const Profile& p, std::string_view a, std::string_view b)
      : p_(p), metadata_(p, {p.strings.find(a), p.strings.find(b)}) {}
  Values operator()(uint32_t plane, uint32_t e) {
    Values out;
    read(plane, ScannedEvent{.metadata = p_.events.metadata[e], .event = e}, out);
    return out;
  }
  // Into `out` in place: small optionals built piecewise and copied whole stall the stores of
  // this per-event loop.
  void read(uint32_t plane, const ScannedEvent& e, Values& out) {
    if (!reader_ || plane != plane_) {
      reader_ = p_.stat_reader(plane, metadata_.names());
      plane_ = plane;
    }
    std::optional<StatValue> v[2];
    reader_->read(e, v);
    if (!v[0] || !v[1]) metadata_.fill_gaps(e.metadata, v);
    set(v[0], out.first);
    set(v[1], out.second);
  }

 private:
  static void set(const std::optional<StatValue>& s, std::optional<int64_t>& out) {
    std::optional<int64_t> i = s ? s->as_int() : std::nullopt;
    if (i)
      out.emplace(*i);
    else
      out.reset();
  }

  const Profile& p_;
  MetadataStatCache<2> metadata_;
  std::unique_ptr<StatReader> reader_;  // for events of plane_
  uint32_t plane_ = 0;
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

// Whether events of a metadata entry carry a correlation id is decided by its first event:
// launch APIs always do, the millions of other host events never do, and reading stats from the
// file is the expensive part.
enum LaunchKind : uint8_t { kUnknown, kLaunch, kOther };

// What one host line holds: its launches and ExecuteThunks windows, and the kinds it took as
// given and those it decided.
struct LineLaunches {
  using Kinds = std::vector<std::pair<uint32_t, uint8_t>>;  // (metadata entry, kind)
  uint32_t line = 0;
  Kinds given, decided;
  std::vector<std::pair<int64_t, HostLaunches::Launch>> launches;  // (correlation id, launch)
  std::vector<Window> windows;
};

// Reads one line starting from the kinds `kind` (one per metadata entry, kUnknown where none is
// given). The line is scanned, not decoded, twice: for the first event of each entry whose kind
// is not known yet, then for the launches and ExecuteThunks events alone, so that the other
// events of a busy thread are passed over in the file.
void read_line_launches(const Profile& p, std::vector<uint8_t> kind, LineLaunches& out,
                        std::vector<ScannedEvent>& events) {
  out.given.clear();
  out.decided.clear();
  out.launches.clear();
  out.windows.clear();
  auto name_of = [&](uint32_t m) { return p.str(p.event_metadata[m].name); };
  // ExecuteThunks events are windows whatever their stats: they never take a kind.
  std::vector<uint8_t> want(kind.size());
  LineFilter undecided(p);
  for (uint32_t m = 0; m < kind.size(); ++m) {
    want[m] = kind[m] == kUnknown && name_of(m) != kGpuExecuteEvent;
    if (want[m]) undecided.want(m);
    if (kind[m] != kUnknown) out.given.emplace_back(m, kind[m]);
  }
  TwoStats correlation(p, "correlation_id", "correlation_id");
  TwoStats::Values ids;
  const uint32_t plane = p.lines[out.line].plane;
  events.clear();
  if (undecided.may_hold(out.line)) p.scan_line_firsts(out.line, want, events);
  for (const ScannedEvent& e : events) {
    std::string_view name = name_of(e.metadata);
    bool found = false;
    if (!name.starts_with('$')) {  // Python tracer frames carry no stats
      correlation.read(plane, e, ids);
      found = ids.first.has_value();
    }
    kind[e.metadata] = found ? kLaunch : kOther;
    out.decided.emplace_back(e.metadata, kind[e.metadata]);
  }
  for (uint32_t m = 0; m < kind.size(); ++m) want[m] = kind[m] != kOther;
  p.scan_line(out.line, want, events);
  out.launches.reserve(events.size());
  for (const ScannedEvent& e : events) {
    if (kind[e.metadata] != kLaunch) {
      if (name_of(e.metadata) == kGpuExecuteEvent)
        out.windows.push_back({e.start_ps, e.start_ps + e.duration_ps});
      continue;
    }
    correlation.read(plane, e, ids);
    if (ids.first) out.launches.push_back({*ids.first, {out.line, e.start_ps}});
  }
}

// `all`: every host line, or only those that may hold ExecuteThunks events or GPU API calls.
HostLaunches index_host_launches(const Profile& p, uint32_t host, bool all) {
  HostLaunches h;
  h.all_lines = all;
  LineFilter wanted(p);
  if (!all)
    for (uint32_t m = 0; m < p.event_metadata.size(); ++m) {
      const EventMetadata& md = p.event_metadata[m];
      const Plane& plane = p.planes[md.plane];
      if (plane.kind != PlaneKind::kHostCpu || plane.host != host) continue;
      std::string_view name = p.str(md.name);
      if (name == kGpuExecuteEvent || is_gpu_api_name(name)) wanted.want(m);
    }
  std::vector<LineLaunches> lines;
  std::vector<uint64_t> costs;
  uint64_t total = 0;
  for (const Plane& plane : p.planes)
    if (plane.kind == PlaneKind::kHostCpu && plane.host == host)
      for (uint32_t li : plane.lines)
        if (all || wanted.may_hold(li)) {
          lines.emplace_back().line = li;
          costs.push_back(p.lines[li].event_count);
          total += p.lines[li].event_count;
        }

  // A single reader would go in line order, each line starting from the kinds the lines before
  // it decided. The lines are read in parallel instead, each starting from what the lines before
  // it that its thread has read decided; then, in line order, a line whose given or decided
  // kinds differ from those of the lines before it (an entry whose first event was not the
  // first in line order) is read again from them, so the result is that of a single reader.
  std::vector<uint32_t> unscannable;  // decoded first: the threads only read
  for (const LineLaunches& line : lines)
    if (!p.can_scan(line.line)) unscannable.push_back(line.line);
  p.require_lines(unscannable);
  const size_t threads = parts_for(total, kEventsPerPart);
  // Python frames never carry a correlation id (read_line_launches reads no stats of theirs):
  // their kind is known before any line is read.
  std::vector<uint8_t> by_name(p.event_metadata.size(), kUnknown);
  for (uint32_t m = 0; m < by_name.size(); ++m)
    if (p.str(p.event_metadata[m].name).starts_with('$')) by_name[m] = kOther;
  std::vector<std::vector<size_t>> read_by(threads);  // the lines each thread has read
  std::vector<std::vector<ScannedEvent>> buffers(threads);
  Profile::ReadOnlyScope reading(p);
  for_each_parallel(costs, threads, [&](size_t k, size_t thread) {
    std::vector<uint8_t> kind = by_name;
    std::vector<size_t>& done = read_by[thread];
    std::sort(done.begin(), done.end());
    for (size_t j : done) {
      if (j > k) break;
      for (auto [m, d] : lines[j].decided)
        if (kind[m] == kUnknown) kind[m] = d;
    }
    read_line_launches(p, std::move(kind), lines[k], buffers[thread]);
    done.push_back(k);
  });
  std::vector<uint8_t> before = by_name;  // and decided by the lines before
  for (LineLaunches& line : lines) {
    bool agrees = true;
    for (auto [m, k] : line.given) agrees &= before[m] == k;
    for (auto [m, k] : line.decided) agrees &= before[m] == kUnknown || before[m] == k;
    if (!agrees) read_line_launches(p, before, line, buffers[0]);
    for (auto [m, k] : line.decided)
      if (before[m] == kUnknown) before[m] = k;
  }

  size_t launches = 0;
  for (const LineLaunches& line : lines) launches += line.launches.size();
  h.by_correlation.reserve(launches);
  std::unordered_map<uint32_t, std::vector<Window>> raw;
  for (LineLaunches& line : lines) {
    if (!line.windows.empty()) raw[line.line] = std::move(line.windows);
    for (const auto& [corr, launch] : line.launches) h.by_correlation[corr] = launch;
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
    if (key && last_keyed_ < execs_.size() && last_key_ == std::pair(module, *key)) {
      target = last_keyed_;  // runs of events share a key: no lookup
    } else if (key) {
      auto [it, inserted] = keyed_.try_emplace({module, *key}, execs_.size());
      if (inserted) open(module, group);
      target = last_keyed_ = it->second;
      last_key_ = {module, *key};
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
  size_t last_ = SIZE_MAX;  // the execution of the previous event
  // The last key looked up and its execution.
  std::pair<uint32_t, int64_t> last_key_;
  size_t last_keyed_ = SIZE_MAX;
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
  auto by_start = [&](uint32_t a, uint32_t b) {
    int64_t sa = p.events.start_ps[a], sb = p.events.start_ps[b];
    return sa != sb ? sa < sb : a < b;
  };
  // One line (a GPU stream) is in order already.
  if (!std::is_sorted(out.begin(), out.end(), by_start))
    std::sort(out.begin(), out.end(), by_start);
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

// The device plane's "XLA Modules" line (TPU), when it has events and the device is not a CPU one.
std::optional<uint32_t> module_line_of(const Profile& p, const DeviceLines& dev) {
  if (dev.hlo_ops_only) return std::nullopt;
  std::optional<uint32_t> module_line;
  for (uint32_t li : p.planes[dev.plane].lines)
    if (p.lines[li].event_count > 0 && p.str(p.lines[li].name) == "XLA Modules") module_line = li;
  return module_line;
}

std::vector<ModuleExecution> from_module_line(const Profile& p, const DeviceLines& dev,
                                              uint32_t module_line) {
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
  // Each event's execution, in line order; visited twice (count, then fill) so that each
  // execution's list is allocated once and no list of all events is kept.
  auto place = [&](auto&& take) {
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
        if (m != 0 && x.program_id != kNoProgram && p.modules[m].program_id != x.program_id)
          continue;
        take(x, e);
      }
    }
  };
  std::vector<uint32_t> counts(out.size(), 0);
  place([&](const ModuleExecution& x, uint32_t) { ++counts[&x - out.data()]; });
  for (size_t k = 0; k < out.size(); ++k) out[k].events.reserve(counts[k]);
  place([](ModuleExecution& x, uint32_t e) { x.events.push_back(e); });
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

// A GPU device's op events with a module, by start, and their (correlation id, group id).
struct KernelIds {
  std::vector<uint32_t> events;
  std::vector<TwoStats::Values> ids;
  bool any_correlation = false;
};

// Everything of one device that needs no host launches: a finished result for TPU and CPU devices
// (and devices without op events with a module), else the GPU kernels to group.
void read_device(const Profile& p, const DeviceLines& dev, DeviceExecutions& d, KernelIds& gpu) {
  d.plane = dev.plane;
  d.device = dev.name;
  if (std::optional<uint32_t> module_line = module_line_of(p, dev); module_line) {
    d.executions = from_module_line(p, dev, *module_line);
    d.source = ExecutionSource::kModuleLine;
    finish(p, d.executions);
    return;
  }
  std::vector<uint32_t> events = module_events(p, dev);
  if (events.empty()) return;
  if (dev.hlo_ops_only) {
    Grouper grouper(p);
    grouper.keys_are_run_ids();
    d.source = ExecutionSource::kRunId;
    TwoStats stats(p, "run_id", "group_id");
    for (uint32_t e : events) {
      auto [run, group] = stats(dev.plane, e);
      grouper.add(e, run, group);
    }
    d.executions = grouper.take();
    finish(p, d.executions);
    return;
  }
  d.source = ExecutionSource::kConsecutive;
  TwoStats stats(p, "correlation_id", "group_id");
  gpu.ids.reserve(events.size());
  for (uint32_t e : events) {
    stats.read(dev.plane, ScannedEvent{.metadata = p.events.metadata[e], .event = e},
               gpu.ids.emplace_back());
    gpu.any_correlation |= gpu.ids.back().first.has_value();
  }
  gpu.events = std::move(events);
}

// GPU kernels into executions: by the ExecuteThunks window around their launch when `host` has
// it, else consecutive kernels of one module and group id.
void group_kernels(const Profile& p, const KernelIds& gpu, const HostLaunches* host,
                   DeviceExecutions& d) {
  Grouper grouper(p);
  for (size_t k = 0; k < gpu.events.size(); ++k) {
    auto [corr, group] = gpu.ids[k];
    std::optional<int64_t> window;
    if (corr && host)
      if (auto w = host->window_of(*corr)) window = *w;
    if (window) d.source = ExecutionSource::kHostLaunch;
    grouper.add(gpu.events[k], window, group);
  }
  d.executions = grouper.take();
  finish(p, d.executions);
}

std::vector<DeviceExecutions> compute_module_executions(const Profile& p) {
  std::vector<DeviceLines> devices = op_devices(p);
  std::vector<uint32_t> needed;
  std::vector<uint64_t> costs;  // op events per device
  uint64_t device_events = 0;
  for (const DeviceLines& dev : devices) {
    needed.insert(needed.end(), dev.lines.begin(), dev.lines.end());
    if (auto li = module_line_of(p, dev)) needed.push_back(*li);
    device_events += costs.emplace_back(dev.line_events(p));
  }
  p.require_lines(needed);  // before the parallel parts, which only read

  // Devices are read in parallel, all but the GPU grouping.
  std::vector<DeviceExecutions> out(devices.size());
  std::vector<KernelIds> gpu(devices.size());
  const size_t threads = parts_for(device_events, kOpEventsPerPart);
  {
    Profile::ReadOnlyScope reading(p);
    for_each_parallel(costs, threads,
                      [&](size_t k, size_t) { read_device(p, devices[k], out[k], gpu[k]); });
  }

  // The host lines with ExecuteThunks events or GPU API calls first; every host line from the
  // first device on whose kernels name a launch those miss (one recorded under another name).
  struct HostIndexes {
    std::unique_ptr<HostLaunches> likely, all;
  };
  std::map<uint32_t, HostIndexes> hosts;  // built on first use
  std::vector<const HostLaunches*> host_of(devices.size(), nullptr);
  for (size_t k = 0; k < devices.size(); ++k) {
    if (!gpu[k].any_correlation) continue;
    uint32_t h = p.planes[devices[k].plane].host;
    HostIndexes& index = hosts[h];
    if (!index.likely)
      index.likely = std::make_unique<HostLaunches>(index_host_launches(p, h, false));
    if (!index.all)
      for (const auto& ids_of : gpu[k].ids)
        if (ids_of.first && !index.likely->by_correlation.count(*ids_of.first)) {
          index.all = std::make_unique<HostLaunches>(index_host_launches(p, h, true));
          break;
        }
    host_of[k] = index.all ? index.all.get() : index.likely.get();
  }
  Profile::ReadOnlyScope reading(p);
  for_each_parallel(costs, threads, [&](size_t k, size_t) {
    if (!gpu[k].events.empty()) group_kernels(p, gpu[k], host_of[k], out[k]);
  });
  return out;
}

}  // namespace

const std::vector<DeviceExecutions>& module_executions(const Profile& p) {
  return p.memo<std::vector<DeviceExecutions>>("module_executions",
                                               [&] { return compute_module_executions(p); });
}

}  // namespace jaxprof
