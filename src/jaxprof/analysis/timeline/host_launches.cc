#include "jaxprof/analysis/timeline/host_launches.h"

#include <algorithm>
#include <cctype>
#include <span>
#include <stdexcept>
#include <string_view>

#include "jaxprof/analysis/ops/line_filter.h"
#include "jaxprof/common/parallel_parts.h"
#include "jaxprof/model/metadata_stat_cache.h"

namespace jaxprof {
namespace {

// The host event that spans one execution of a GPU executable on its launching thread.
constexpr std::string_view kGpuExecuteEvent = "GpuExecutable::ExecuteThunks";

// Host events worth a thread of their own.
constexpr uint64_t kEventsPerPart = 100000;

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
// launch APIs always do, the millions of other host events never do.
enum LaunchKind : uint8_t { kUnknown, kLaunch, kOther };

// The names the lines are read for, interned (UINT32_MAX when the profile has none).
struct LaunchNames {
  StringId correlation;  // the stat
  StringId execute;      // the window event
};

struct LaunchAt {
  int64_t correlation, time;
};

// What one host line holds: its launches and ExecuteThunks windows, and the kinds it took as
// given and those it decided.
struct LineLaunches {
  using Kinds = std::vector<std::pair<uint32_t, uint8_t>>;  // (metadata entry, kind)
  uint32_t line = 0;
  Kinds given, decided;
  // In line order. Sized to what the line holds: most host lines have no launches, and room
  // for one per event would cost page faults for nothing.
  std::vector<LaunchAt> launches;
  std::vector<HostLaunches::Window> windows;
};

// An event's place in line order: by start, the longer first (as lines are sorted).
template <typename A, typename B>
bool before(const A& a, const B& b) {
  return a.start_ps != b.start_ps ? a.start_ps < b.start_ps : a.duration_ps > b.duration_ps;
}

// What read_line_launches keeps between the lines one thread reads.
struct LineScratch {
  static constexpr uint32_t kNoFirst = UINT32_MAX;
  struct Picked {  // an event with a correlation id
    int64_t correlation, start_ps, duration_ps;
    uint32_t metadata;
  };
  struct First {  // the first event in line order of an entry whose kind is not known yet
    uint32_t metadata;
    int64_t start_ps, duration_ps;
    bool has_correlation;
  };
  std::vector<uint8_t> want;
  std::vector<Picked> picked;  // in file order
  std::vector<First> firsts;
  std::vector<uint32_t> first_of;  // metadata entry -> index into firsts, or kNoFirst
};

// Reads one line starting from the kinds `kind` (one per metadata entry, kUnknown where none is
// given), in one pass over its bytes that passes over the events of entries known to be neither
// launches nor windows: the first event of each entry of unknown kind decides it, and the events
// with a correlation id of the entries that are launches are the line's launches.
void read_line_launches(const Profile& p, const LaunchNames& names, std::vector<uint8_t> kind,
                        LineLaunches& out, LineScratch& s) {
  out.given.clear();
  out.decided.clear();
  out.launches.clear();
  out.windows.clear();
  s.want.resize(kind.size());
  for (uint32_t m = 0; m < kind.size(); ++m) {
    s.want[m] = kind[m] != kOther;
    if (kind[m] != kUnknown) out.given.emplace_back(m, kind[m]);
  }
  if (s.first_of.size() != kind.size()) s.first_of.assign(kind.size(), LineScratch::kNoFirst);
  s.picked.clear();
  s.picked.reserve(p.lines[out.line].event_count);  // once per thread, for its longest line
  s.firsts.clear();
  MetadataStatCache<1> metadata(p, {names.correlation});
  bool in_order = true;  // picked, so far
  p.visit_line(out.line, s.want, std::span(&names.correlation, 1),
               [&](const ScannedEvent& e, std::span<const std::optional<StatValue>> own) {
                 const uint32_t m = e.metadata;
                 // ExecuteThunks events are windows whatever their stats: they never take a kind.
                 if (p.event_metadata[m].name == names.execute) {
                   out.windows.push_back({e.start_ps, e.start_ps + e.duration_ps});
                   return;
                 }
                 const std::optional<StatValue>& stat = own[0] ? own[0] : metadata[m][0];
                 const std::optional<int64_t> correlation = stat ? stat->as_int() : std::nullopt;
                 if (kind[m] == kUnknown) {
                   LineScratch::First here{m, e.start_ps, e.duration_ps, correlation.has_value()};
                   uint32_t& f = s.first_of[m];
                   if (f == LineScratch::kNoFirst) {
                     f = static_cast<uint32_t>(s.firsts.size());
                     s.firsts.push_back(here);
                   } else if (before(here, s.firsts[f])) {  // ties keep the earlier
                     s.firsts[f] = here;
                   }
                 }
                 if (!correlation) return;
                 if (!s.picked.empty() && before(e, s.picked.back())) in_order = false;
                 s.picked.push_back({*correlation, e.start_ps, e.duration_ps, m});
               });
  for (const LineScratch::First& f : s.firsts) {
    // Python tracer frames ($-names) carry no correlation id even where a stat says otherwise.
    bool launch = f.has_correlation && !p.str(p.event_metadata[f.metadata].name).starts_with('$');
    kind[f.metadata] = launch ? kLaunch : kOther;
    out.decided.emplace_back(f.metadata, kind[f.metadata]);
    s.first_of[f.metadata] = LineScratch::kNoFirst;
  }
  std::erase_if(s.picked,
                [&](const LineScratch::Picked& x) { return kind[x.metadata] != kLaunch; });
  // Line order matters where correlation ids repeat: the last launch in line order counts.
  if (!in_order)
    std::stable_sort(s.picked.begin(), s.picked.end(),
                     [](const auto& a, const auto& b) { return before(a, b); });
  out.launches.reserve(s.picked.size());
  for (const LineScratch::Picked& x : s.picked) out.launches.push_back({x.correlation, x.start_ps});
}

// Calls f(launch, window) for each launch time (ascending) that a window (disjoint, by begin)
// contains, with their indexes: a merge that leaps over runs of windows without launches.
template <typename F>
void for_each_window(std::span<const int64_t> times, std::span<const HostLaunches::Window> ws,
                     F&& f) {
  size_t w = 0;  // the first window that may contain the next launch
  for (size_t i = 0; i < times.size() && w < ws.size(); ++i) {
    const int64_t t = times[i];
    if (ws[w].end < t) {
      // Leap: windows ending before t, found by doubling steps, then a binary search.
      size_t step = 1;
      while (w + step < ws.size() && ws[w + step].end < t) step *= 2;
      auto from = ws.begin() + static_cast<std::ptrdiff_t>(w + step / 2);
      auto to = ws.begin() + static_cast<std::ptrdiff_t>(std::min(w + step, ws.size()));
      w = static_cast<size_t>(
          std::partition_point(from, to, [&](const HostLaunches::Window& x) { return x.end < t; }) -
          ws.begin());
      if (w == ws.size()) break;
    }
    if (ws[w].begin <= t) f(i, w);
  }
}

// What is known of each metadata entry before any line is read. Python frames ($-names) never
// carry a correlation id. Without `all`, only GPU API calls may be launches and only their
// lines and those with ExecuteThunks events are read (`wanted` learns which entries those are);
// a kernel whose launch this misses makes the caller index every host line.
std::vector<uint8_t> kinds_by_name(const Profile& p, uint32_t host, bool all, LineFilter& wanted) {
  std::vector<uint8_t> by_name(p.event_metadata.size(), kUnknown);
  for (uint32_t m = 0; m < p.event_metadata.size(); ++m) {
    const EventMetadata& md = p.event_metadata[m];
    const Plane& plane = p.planes[md.plane];
    std::string_view name = p.str(md.name);
    if (name.starts_with('$')) {
      by_name[m] = kOther;
    } else if (!all) {
      bool ours = plane.kind == PlaneKind::kHostCpu && plane.host == host;
      if (ours && (name == kGpuExecuteEvent || is_gpu_api_name(name)))
        wanted.want(m);
      else
        by_name[m] = kOther;
    }
  }
  return by_name;
}

// The host lines to read, in line order: all of them, or those that may hold wanted events.
std::vector<LineLaunches> lines_to_read(const Profile& p, uint32_t host, bool all,
                                        const LineFilter& wanted) {
  std::vector<LineLaunches> lines;
  for (const Plane& plane : p.planes)
    if (plane.kind == PlaneKind::kHostCpu && plane.host == host)
      for (uint32_t li : plane.lines)
        if (all || wanted.may_hold(li)) lines.emplace_back().line = li;
  return lines;
}

// Reads the launches and windows of every line, starting from the kinds `by_name`.
//
// A single reader would go in line order, each line starting from the kinds the lines before
// it decided. The lines are read in parallel instead, each starting from what the lines before
// it that its thread has read decided; then, in line order, a line whose given or decided
// kinds differ from those of the lines before it (an entry whose first event was not the
// first in line order) is read again from them, so the result is that of a single reader.
void read_lines(const Profile& p, const std::vector<uint8_t>& by_name,
                std::vector<LineLaunches>& lines) {
  std::vector<uint64_t> costs;
  uint64_t total = 0;
  for (const LineLaunches& line : lines) {
    costs.push_back(p.lines[line.line].event_count);
    total += p.lines[line.line].event_count;
  }
  std::vector<uint32_t> unscannable;  // decoded first: the threads only read
  for (const LineLaunches& line : lines)
    if (!p.can_scan(line.line)) unscannable.push_back(line.line);
  p.require_lines(unscannable);
  const LaunchNames names{p.strings.find("correlation_id"), p.strings.find(kGpuExecuteEvent)};
  const size_t threads = parts_for(total, kEventsPerPart);
  std::vector<std::vector<size_t>> read_by(threads);  // the lines each thread has read
  std::vector<LineScratch> scratch(threads);
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
    read_line_launches(p, names, std::move(kind), lines[k], scratch[thread]);
    done.push_back(k);
  });
  std::vector<uint8_t> before = by_name;  // and decided by the lines before
  for (LineLaunches& line : lines) {
    bool agrees = true;
    for (auto [m, k] : line.given) agrees &= before[m] == k;
    for (auto [m, k] : line.decided) agrees &= before[m] == kUnknown || before[m] == k;
    if (!agrees) read_line_launches(p, names, before, line, scratch[0]);
    for (auto [m, k] : line.decided)
      if (before[m] == kUnknown) before[m] = k;
  }
}

// One host thread's execution windows, disjoint and by begin; their ids are first_id on.
struct WindowLine {
  uint32_t line;
  uint32_t first_id;
  std::vector<HostLaunches::Window> windows;
};

// Each thread's windows by begin, the outermost of nested ones kept so that they are disjoint;
// window ids count through the lines. By line number: ties between them go to the first.
std::vector<WindowLine> disjoint_window_lines(std::vector<LineLaunches>& lines) {
  using Window = HostLaunches::Window;
  std::vector<WindowLine> window_lines;
  uint32_t window_ids = 0;
  for (LineLaunches& line : lines) {
    if (line.windows.empty()) continue;
    std::vector<Window>& ws = line.windows;
    std::sort(ws.begin(), ws.end(), [](const Window& a, const Window& b) {
      return a.begin != b.begin ? a.begin < b.begin : a.end > b.end;
    });
    size_t kept = 0;
    for (const Window& w : ws)
      if (kept == 0 || w.begin > ws[kept - 1].end) ws[kept++] = w;
    ws.resize(kept);
    window_lines.push_back({line.line, window_ids, std::move(ws)});
    window_ids += static_cast<uint32_t>(kept);
  }
  std::sort(window_lines.begin(), window_lines.end(),
            [](const WindowLine& a, const WindowLine& b) { return a.line < b.line; });
  return window_lines;
}

// The window line whose windows contain most of the launch times (ascending), the first of
// those that tie; null when none contains any.
const WindowLine* best_window_line(std::span<const int64_t> times,
                                   const std::vector<WindowLine>& window_lines) {
  const WindowLine* best = nullptr;
  size_t best_hits = 0;
  for (const WindowLine& wl : window_lines) {
    size_t hits = 0;
    for_each_window(times, wl.windows, [&](size_t, size_t) { ++hits; });
    if (hits > best_hits) {
      best = &wl;
      best_hits = hits;
    }
  }
  return best;
}

}  // namespace

HostLaunches HostLaunches::index(const Profile& p, uint32_t host, bool all, IdLookup lookup,
                                 bool keep_times) {
  HostLaunches h;
  LineFilter wanted(p);
  const std::vector<uint8_t> by_name = kinds_by_name(p, host, all, wanted);
  std::vector<LineLaunches> lines = lines_to_read(p, host, all, wanted);
  read_lines(p, by_name, lines);

  // One launch per correlation id, the last in line order: its line (index into `lines`) and
  // place there.
  size_t launches = 0;
  int64_t lowest = INT64_MAX, highest = INT64_MIN;
  for (const LineLaunches& line : lines)
    for (auto [corr, time] : line.launches) {
      ++launches;
      lowest = std::min(lowest, corr);
      highest = std::max(highest, corr);
    }
  // Tracers number every API call, launches being a share of them: a table of up to 16 four-byte
  // slots per launch takes no more memory than a hash map entry per launch. Unsigned: the span
  // of any two int64 values fits.
  const bool dense = lookup == IdLookup::kAuto && launches > 0 &&
                     static_cast<uint64_t>(highest) - static_cast<uint64_t>(lowest) <
                         16 * static_cast<uint64_t>(launches) + 1024;
  if (dense) {
    h.first_id_ = lowest;
    h.dense_.resize(static_cast<uint64_t>(highest) - static_cast<uint64_t>(lowest) + 1);
    std::fill(h.dense_.begin(), h.dense_.end(), kNone);
  } else {
    h.sparse_.reserve(launches);
  }
  struct Place {
    uint32_t line, index;
    bool operator==(const Place&) const = default;
  };
  std::vector<Place> last;  // per slot
  last.reserve(launches);
  auto slot_of = [&](int64_t corr) -> uint32_t& {
    return dense ? h.dense_[static_cast<uint64_t>(corr) - static_cast<uint64_t>(lowest)]
                 : h.sparse_.try_emplace(corr, kNone).first->second;
  };
  for (uint32_t k = 0; k < lines.size(); ++k)
    for (uint32_t i = 0; i < lines[k].launches.size(); ++i) {
      uint32_t& slot = slot_of(lines[k].launches[i].correlation);
      if (slot == kNone) {
        slot = static_cast<uint32_t>(last.size());
        last.emplace_back();
      }
      last[slot] = {k, i};
    }
  h.window_.assign(last.size(), kNoWindow);
  if (keep_times)
    for (const Place& at : last) h.time_.push_back(lines[at.line].launches[at.index].time);

  const std::vector<WindowLine> window_lines = disjoint_window_lines(lines);
  if (window_lines.empty()) return h;

  // Each launch line goes with the window line whose windows contain most of its launches (the
  // ones that count: the last of their correlation id); each of those launches is then in the
  // window of that line that contains it, if one does. The launch lines go in parallel: each
  // writes the slots of its own launches only.
  std::vector<uint64_t> merges;  // launches times window lines, per line
  for (const LineLaunches& line : lines)
    merges.push_back(line.launches.size() * window_lines.size());
  uint64_t all_merges = 0;
  for (uint64_t m : merges) all_merges += m;
  Profile::ReadOnlyScope reading(p);
  for_each_parallel(merges, parts_for(all_merges, kEventsPerPart), [&](size_t k, size_t) {
    std::vector<int64_t> times;
    std::vector<uint32_t> slots;
    for (uint32_t i = 0; i < lines[k].launches.size(); ++i) {
      uint32_t slot = h.slot(lines[k].launches[i].correlation);
      if (last[slot] == Place{static_cast<uint32_t>(k), i}) {
        times.push_back(lines[k].launches[i].time);
        slots.push_back(slot);
      }
    }
    if (times.empty()) return;
    // Launches are in line order, by start: a merge with the windows finds their windows.
    if (!std::is_sorted(times.begin(), times.end()))
      throw std::logic_error("HostLaunches::index: launches not in line order");
    const WindowLine* best = best_window_line(times, window_lines);
    if (!best) return;
    for_each_window(times, best->windows, [&](size_t launch, size_t window) {
      h.window_[slots[launch]] = best->first_id + static_cast<uint32_t>(window);
    });
  });
  return h;
}

uint32_t HostLaunches::sparse_slot(int64_t correlation) const {
  auto it = sparse_.find(correlation);
  return it == sparse_.end() ? kNone : it->second;
}

std::optional<uint32_t> HostLaunches::window_of(int64_t correlation) const {
  uint32_t s = slot(correlation);
  if (s == kNone || window_[s] == kNoWindow) return std::nullopt;
  return window_[s];
}

std::optional<int64_t> HostLaunches::launch_time(int64_t correlation) const {
  const uint32_t s = slot(correlation);
  if (s == kNone || s >= time_.size()) return std::nullopt;
  return time_[s];
}

}  // namespace jaxprof
