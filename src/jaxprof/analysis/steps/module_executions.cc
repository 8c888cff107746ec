#include "jaxprof/analysis/steps/module_executions.h"

#include <algorithm>
#include <charconv>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <unordered_map>

#include "jaxprof/analysis/compile/compile.h"
#include "jaxprof/analysis/ops/device_events.h"
#include "jaxprof/analysis/timeline/host_launches.h"
#include "jaxprof/common/parallel_parts.h"
#include "jaxprof/model/column.h"
#include "jaxprof/model/metadata_stat_cache.h"
#include "jaxprof/model/partial/partial.h"

namespace jaxprof {

namespace {

// Op events worth a thread of their own.
constexpr uint64_t kOpEventsPerPart = 20000;

// Reads two integer stats of many events without decoding the rest of their stats: the event's
// own, else its metadata's (as Profile::find_event_stats), the latter read once per metadata.
class TwoStats {
 public:
  struct Values {
    std::optional<int64_t> first, second;
  };

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
  // As read(), from the event's own values as an Events id column holds them (Events::kNoStat:
  // none of its own, so its metadata's).
  void read_own(uint32_t plane, uint32_t e, int64_t own_first, int64_t own_second, Values& out) {
    if (own_first == Events::kStatInFile || own_second == Events::kStatInFile) {
      read(plane, ScannedEvent{.metadata = p_.events.metadata[e], .event = e}, out);
      return;
    }
    const uint32_t m = p_.events.metadata[e];
    if (own_first != Events::kNoStat)
      out.first.emplace(own_first);
    else
      set(metadata_[m][0], out.first);
    if (own_second != Events::kNoStat)
      out.second.emplace(own_second);
    else
      set(metadata_[m][1], out.second);
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

// Each execution's events, from the execution of each event (events in start order), into
// d.event_storage; the order of each execution's events is kept.
void store_events(DeviceExecutions& d, std::span<const uint32_t> events,
                  std::span<const uint32_t> execution_of) {
  std::vector<uint32_t> next(d.executions.size() + 1, 0);  // where each execution's next one goes
  for (uint32_t x : execution_of) ++next[x + 1];
  for (size_t x = 1; x < next.size(); ++x) next[x] += next[x - 1];
  d.event_storage.resize(events.size());
  for (size_t x = 0; x < d.executions.size(); ++x)
    d.executions[x].events = {d.event_storage.data() + next[x], next[x + 1] - next[x]};
  for (size_t k = 0; k < events.size(); ++k) d.event_storage[next[execution_of[k]]++] = events[k];
}

// Groups op events into executions: events with a key (window or run id) go to the execution of
// (module, key); events without one continue the previous event's execution when module and
// group id agree.
class Grouper {
 public:
  // `events`: at most this many are added.
  Grouper(const Profile& p, size_t events) : p_(p) { execution_of_.resize(events); }

  void add(uint32_t e, std::optional<int64_t> key, std::optional<int64_t> group) {
    uint32_t module = p_.events.module[e];
    size_t target;
    if (key && last_keyed_ < execs_.size() && last_key_ == std::pair(module, *key)) {
      target = last_keyed_;  // runs of events share a key: no lookup
    } else if (key) {
      auto [it, inserted] = keyed_.try_emplace({module, *key}, execs_.size());
      if (inserted) open(module, group, e);
      target = last_keyed_ = it->second;
      last_key_ = {module, *key};
    } else if (last_ < execs_.size() && execs_[last_].module == module && groups_[last_] == group) {
      target = last_;
    } else {
      target = execs_.size();
      open(module, group, e);
    }
    ModuleExecution& x = execs_[target];
    x.start_ps = std::min(x.start_ps, p_.events.start_ps[e]);
    x.end_ps = std::max(x.end_ps, p_.events.end_ps(e));
    execution_of_[added_++] = static_cast<uint32_t>(target);
    if (key && run_ids_) x.run_id = *key;
    last_ = target;
  }

  void keys_are_run_ids() { run_ids_ = true; }
  // The executions into d, with their events: `events`, the events added, in the order added.
  void take(DeviceExecutions& d, std::span<const uint32_t> events) {
    if (events.size() != added_) throw std::logic_error("Grouper::take: not the events added");
    d.executions = std::move(execs_);
    store_events(d, events, std::span(execution_of_.data(), added_));
  }

 private:
  void open(uint32_t module, std::optional<int64_t> group, uint32_t first_event) {
    ModuleExecution& x = execs_.emplace_back();
    x.module = module;
    x.start_ps = p_.events.start_ps[first_event];
    x.end_ps = p_.events.end_ps(first_event);
    groups_.push_back(group);
  }

  const Profile& p_;
  Column<uint32_t> execution_of_;  // per event added
  size_t added_ = 0;
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
  std::vector<size_t> ends;  // of each line's events in `out`
  for (uint32_t li : dev.lines) {
    const Line& line = p.lines[li];
    for (uint32_t e = line.first_event; e < line.first_event + line.event_count; ++e)
      if (p.events.module[e] != 0 && dev.counts(p.events, e)) out.push_back(e);
    ends.push_back(out.size());
  }
  auto by_start = [&](uint32_t a, uint32_t b) {
    int64_t sa = p.events.start_ps[a], sb = p.events.start_ps[b];
    return sa != sb ? sa < sb : a < b;
  };
  if (std::is_sorted(out.begin(), out.end(), by_start)) return out;  // one line (a GPU stream)
  // Decoded lines are in start order, index order on ties: their runs are merged pairwise.
  bool runs_sorted = true;
  for (size_t k = 0, begin = 0; k < ends.size(); begin = ends[k++])
    runs_sorted &= std::is_sorted(out.begin() + begin, out.begin() + ends[k], by_start);
  if (!runs_sorted) {
    std::sort(out.begin(), out.end(), by_start);
    return out;
  }
  while (ends.size() > 1) {
    std::vector<size_t> merged;
    for (size_t k = 0; k < ends.size(); k += 2) {
      if (k + 1 == ends.size()) {
        merged.push_back(ends[k]);
        break;
      }
      size_t begin = k == 0 ? 0 : ends[k - 1];
      std::inplace_merge(out.begin() + begin, out.begin() + ends[k], out.begin() + ends[k + 1],
                         by_start);
      merged.push_back(ends[k + 1]);
    }
    ends = std::move(merged);
  }
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

// The executions of the module line into d, with their events.
void from_module_line(const Profile& p, const DeviceLines& dev, uint32_t module_line,
                      DeviceExecutions& d) {
  const Line& line = p.lines[module_line];
  std::vector<ModuleExecution> out;
  TwoStats run_id(p, "run_id", "run_id");
  // Name, program id and module index depend on the event metadata and module only: resolve each
  // pair once (nsys-jax module ranges share a metadata entry per name, not per program).
  std::unordered_map<uint64_t, size_t> first_of_kind;  // (metadata, module) -> an execution
  out.reserve(line.event_count);
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
  // Each event's execution (or none), in line order, counted per execution; then each
  // execution's events are put in place, so that no list per execution is grown.
  constexpr uint32_t kOutside = UINT32_MAX;
  Column<uint32_t> execution_of;  // per event of the lines, in line order
  execution_of.resize(dev.line_events(p));
  std::vector<uint32_t> next(out.size() + 1, 0);  // where each execution's next event goes
  size_t k = 0;
  for (uint32_t li : dev.lines) {
    const Line& ol = p.lines[li];
    // The line's events come by start: the execution each starts in only moves forward.
    size_t after = 0;  // the first execution starting after the current event
    for (uint32_t e = ol.first_event; e < ol.first_event + ol.event_count; ++e) {
      uint32_t& at = execution_of[k++];
      at = kOutside;
      int64_t t = p.events.start_ps[e];
      while (after < starts.size() && starts[after] <= t) ++after;
      if (after == 0) continue;
      const ModuleExecution& x = out[after - 1];
      if (t >= x.end_ps) continue;
      uint32_t m = p.events.module[e];
      if (m != 0 && x.program_id != kNoProgram && p.modules[m].program_id != x.program_id) continue;
      at = static_cast<uint32_t>(after - 1);
      ++next[after];
    }
  }
  for (size_t x = 1; x < next.size(); ++x) next[x] += next[x - 1];
  d.event_storage.resize(next.back());
  uint32_t* storage = d.event_storage.data();
  for (size_t x = 0; x < out.size(); ++x)
    out[x].events = {storage + next[x], next[x + 1] - next[x]};
  k = 0;
  for (uint32_t li : dev.lines) {
    const Line& ol = p.lines[li];
    for (uint32_t e = ol.first_event; e < ol.first_event + ol.event_count; ++e)
      if (uint32_t at = execution_of[k++]; at != kOutside) storage[next[at]++] = e;
  }
  auto event_by_start = [&](uint32_t a, uint32_t b) {
    int64_t sa = p.events.start_ps[a], sb = p.events.start_ps[b];
    return sa != sb ? sa < sb : a < b;
  };
  // From one op line they already are in order.
  for (ModuleExecution& x : out) {
    uint32_t* first = storage + (x.events.data() - storage);  // the span is const, the slots ours
    uint32_t* last = first + x.events.size();
    if (!std::is_sorted(first, last, event_by_start)) std::sort(first, last, event_by_start);
  }
  d.executions = std::move(out);
}

// CPU op events without run_id (JAX 0.4.33 to 0.6.1 record only hlo_op, hlo_module and
// program_id): all devices' ops share the host threads, so runs by start order across threads
// interleave. One execution runs its thunks one after another on one host thread: per line, an
// execution is a run of consecutive op events of one module. A thread starts serving another
// call with a `*CpuExecutable::ExecuteHelper` event (not always the call it then runs), so one
// on the line also ends the run: the same program twice in a row on a thread stays two.
void from_host_threads(const Profile& p, const DeviceLines& dev, DeviceExecutions& d) {
  std::unordered_map<uint32_t, bool> starts_run;  // per event metadata
  auto is_execute_helper = [&](uint32_t e) {
    auto [it, added] = starts_run.try_emplace(p.events.metadata[e], false);
    if (added) it->second = p.event_name(e).ends_with("CpuExecutable::ExecuteHelper");
    return it->second;
  };
  std::vector<uint32_t> events, execution_of;
  for (uint32_t li : dev.lines) {
    const Line& line = p.lines[li];
    size_t open = SIZE_MAX;  // the line's current execution
    for (uint32_t e = line.first_event; e < line.first_event + line.event_count; ++e) {
      const uint32_t module = p.events.module[e];
      if (module == 0 || !dev.counts(p.events, e)) {
        if (is_execute_helper(e)) open = SIZE_MAX;
        continue;
      }
      if (open == SIZE_MAX || d.executions[open].module != module) {
        open = d.executions.size();
        ModuleExecution& x = d.executions.emplace_back();
        x.module = module;
        x.start_ps = p.events.start_ps[e];
        x.end_ps = p.events.end_ps(e);
      }
      ModuleExecution& x = d.executions[open];
      x.start_ps = std::min(x.start_ps, p.events.start_ps[e]);
      x.end_ps = std::max(x.end_ps, p.events.end_ps(e));
      events.push_back(e);
      execution_of.push_back(static_cast<uint32_t>(open));
    }
  }
  store_events(d, events, execution_of);
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
  Column<TwoStats::Values> ids;  // one per event
  bool any_correlation = false;
};

// Everything of one device that needs no host launches: a finished result for TPU and CPU devices
// (and devices without op events with a module), else the GPU kernels to group.
void read_device(const Profile& p, const DeviceLines& dev, DeviceExecutions& d, KernelIds& gpu) {
  d.plane = dev.plane;
  d.device = dev.name;
  if (std::optional<uint32_t> module_line = module_line_of(p, dev); module_line) {
    from_module_line(p, dev, *module_line, d);
    d.source = ExecutionSource::kModuleLine;
    finish(p, d.executions);
    return;
  }
  std::vector<uint32_t> events = module_events(p, dev);
  if (events.empty()) return;
  if (dev.hlo_ops_only) {
    TwoStats stats(p, "run_id", "group_id");
    std::vector<TwoStats::Values> ids(events.size());
    bool any_run_id = false;
    for (size_t k = 0; k < events.size(); ++k) {
      ids[k] = stats(dev.plane, events[k]);
      any_run_id |= ids[k].first.has_value();
    }
    if (!any_run_id) {
      from_host_threads(p, dev, d);
      d.source = ExecutionSource::kHostThread;
      finish(p, d.executions);
      return;
    }
    Grouper grouper(p, events.size());
    grouper.keys_are_run_ids();
    d.source = ExecutionSource::kRunId;
    for (size_t k = 0; k < events.size(); ++k) grouper.add(events[k], ids[k].first, ids[k].second);
    grouper.take(d, events);
    finish(p, d.executions);
    return;
  }
  d.source = ExecutionSource::kConsecutive;
  TwoStats stats(p, "correlation_id", "group_id");
  // The importer may have decoded the ids with the events: then the kernels' bytes are not read.
  const bool decoded_ids = std::all_of(dev.lines.begin(), dev.lines.end(), [&](uint32_t li) {
    return p.lines[li].kernel_ids || p.lines[li].event_count == 0;
  });
  gpu.ids.resize(events.size());
  for (size_t k = 0; k < events.size(); ++k) {
    const uint32_t e = events[k];
    gpu.ids[k] = {};  // the slots start uninitialised
    if (decoded_ids)
      stats.read_own(dev.plane, e, p.events.correlation_id[e], p.events.group_id[e], gpu.ids[k]);
    else
      stats.read(dev.plane, ScannedEvent{.metadata = p.events.metadata[e], .event = e}, gpu.ids[k]);
    gpu.any_correlation |= gpu.ids[k].first.has_value();
  }
  gpu.events = std::move(events);
}

// GPU kernels into executions: by the ExecuteThunks window around their launch when `host` has
// it, else consecutive kernels of one module and group id.
void group_kernels(const Profile& p, const KernelIds& gpu, const HostLaunches* host,
                   DeviceExecutions& d) {
  Grouper grouper(p, gpu.events.size());
  for (size_t k = 0; k < gpu.events.size(); ++k) {
    auto [corr, group] = gpu.ids[k];
    std::optional<int64_t> window;
    if (corr && host)
      if (auto w = host->window_of(*corr)) window = *w;
    if (window) d.source = ExecutionSource::kHostLaunch;
    grouper.add(gpu.events[k], window, group);
  }
  grouper.take(d, gpu.events);
  finish(p, d.executions);
}

// Warm-up is a program's first execution on a device (finish marks those) that the capture shows
// being compiled before it started: a capture taken long after compiling has none. Where a host
// records no host threads nothing can be said about compiling, and the first execution alone
// decides.
void keep_compiled_warmups(const Profile& p, std::vector<DeviceExecutions>& out) {
  std::vector<uint8_t> host_threads(p.hosts.size(), 0);
  for (const Plane& plane : p.planes)
    if (plane.kind == PlaneKind::kHostCpu && !plane.lines.empty()) host_threads[plane.host] = 1;
  if (std::none_of(host_threads.begin(), host_threads.end(), [](uint8_t h) { return h != 0; }))
    return;
  const std::vector<PartialCompile>& compiles = compile_totals_by_host(p);
  constexpr int64_t kNever = std::numeric_limits<int64_t>::max();
  // Per host, the earliest compile start by (module, program id); a compile whose program id is
  // not known also counts for every program of its name, one whose module is not known for all.
  struct FirstCompiles {
    std::map<std::pair<std::string_view, ProgramId>, int64_t> by_program;
    std::map<std::string_view, int64_t> by_name;  // any program id
    int64_t unnamed = kNever;
  };
  std::vector<FirstCompiles> first(p.hosts.size());
  for (size_t h = 0; h < compiles.size() && h < first.size(); ++h)
    for (const CompileRecord& c : compiles[h].records) {
      FirstCompiles& f = first[h];
      if (c.module.empty()) {
        f.unnamed = std::min(f.unnamed, c.start_ps);
        continue;
      }
      auto [at, added] = f.by_program.try_emplace({c.module, c.program_id}, c.start_ps);
      if (!added) at->second = std::min(at->second, c.start_ps);
      auto [named, fresh] = f.by_name.try_emplace(c.module, c.start_ps);
      if (!fresh) named->second = std::min(named->second, c.start_ps);
    }
  auto earliest = [](const auto& map, const auto& key) {
    auto it = map.find(key);
    return it == map.end() ? kNever : it->second;
  };
  for (DeviceExecutions& d : out) {
    const uint32_t h = p.planes[d.plane].host;
    if (!host_threads[h]) continue;
    const FirstCompiles& f = first[h];
    for (ModuleExecution& x : d.executions) {
      if (!x.warmup) continue;
      int64_t compiled = std::min(
          f.unnamed,
          earliest(f.by_program, std::pair<std::string_view, ProgramId>{x.name, kNoProgram}));
      compiled = std::min(
          compiled, x.program_id == kNoProgram
                        ? earliest(f.by_name, std::string_view(x.name))
                        : earliest(f.by_program,
                                   std::pair<std::string_view, ProgramId>{x.name, x.program_id}));
      x.warmup = compiled < x.start_ps;
    }
  }
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
      index.likely = std::make_unique<HostLaunches>(HostLaunches::index(p, h, false));
    if (!index.all)
      for (const auto& ids_of : gpu[k].ids)
        if (ids_of.first && !index.likely->has_launch(*ids_of.first)) {
          index.all = std::make_unique<HostLaunches>(HostLaunches::index(p, h, true));
          break;
        }
    host_of[k] = index.all ? index.all.get() : index.likely.get();
  }
  {
    Profile::ReadOnlyScope reading(p);
    for_each_parallel(costs, threads, [&](size_t k, size_t) {
      if (!gpu[k].events.empty()) group_kernels(p, gpu[k], host_of[k], out[k]);
    });
  }
  keep_compiled_warmups(p, out);
  return out;
}

}  // namespace

const std::vector<DeviceExecutions>& module_executions(const Profile& p) {
  return p.memo<std::vector<DeviceExecutions>>("module_executions",
                                               [&] { return compute_module_executions(p); });
}

}  // namespace jaxprof
