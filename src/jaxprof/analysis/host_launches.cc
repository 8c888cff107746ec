#include "jaxprof/analysis/host_launches.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <string_view>

#include "jaxprof/analysis/line_filter.h"
#include "jaxprof/analysis/parallel_parts.h"
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
  // The launches, in line order, in the first `launches` slots of `room` (one per event of the
  // line: the lines of a host share one allocation, touched only as far as it is written).
  std::span<LaunchAt> room;
  size_t launches = 0;
  std::vector<HostLaunches::Window> windows;

  std::span<const LaunchAt> launched() const { return room.first(launches); }
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
  out.launches = 0;
  out.windows.clear();
  s.want.resize(kind.size());
  for (uint32_t m = 0; m < kind.size(); ++m) {
    s.want[m] = kind[m] != kOther;
    if (kind[m] != kUnknown) out.given.emplace_back(m, kind[m]);
  }
  if (s.first_of.size() != kind.size()) s.first_of.assign(kind.size(), LineScratch::kNoFirst);
  s.picked.clear();
  s.picked.reserve(out.room.size());  // once per thread, for its longest line
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
  for (const LineScratch::Picked& x : s.picked)
    out.room[out.launches++] = {x.correlation, x.start_ps};
}

}  // namespace

HostLaunches HostLaunches::index(const Profile& p, uint32_t host, bool all, IdLookup lookup) {
  HostLaunches h;
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
  Column<LaunchAt> room;
  room.resize(total);
  size_t used = 0;
  for (LineLaunches& line : lines) {
    line.room = std::span<LaunchAt>(room.data() + used, p.lines[line.line].event_count);
    used += line.room.size();
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
  const LaunchNames names{p.strings.find("correlation_id"), p.strings.find(kGpuExecuteEvent)};
  const size_t threads = parts_for(total, kEventsPerPart);
  // Python frames never carry a correlation id: their kind is known before any line is read.
  std::vector<uint8_t> by_name(p.event_metadata.size(), kUnknown);
  for (uint32_t m = 0; m < by_name.size(); ++m)
    if (p.str(p.event_metadata[m].name).starts_with('$')) by_name[m] = kOther;
  std::vector<std::vector<size_t>> read_by(threads);  // the lines each thread has read
  std::vector<LineScratch> scratch(threads);
  {
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

  // One launch per correlation id, the last in line order.
  size_t launches = 0;
  int64_t lowest = INT64_MAX, highest = INT64_MIN;
  for (const LineLaunches& line : lines)
    for (auto [corr, time] : line.launched()) {
      ++launches;
      lowest = std::min(lowest, corr);
      highest = std::max(highest, corr);
    }
  // Unsigned: the span of any two int64 values fits.
  const bool dense = lookup == IdLookup::kAuto && launches > 0 &&
                     static_cast<uint64_t>(highest) - static_cast<uint64_t>(lowest) <
                         4 * static_cast<uint64_t>(launches) + 1024;
  if (dense) {
    h.first_id_ = lowest;
    h.dense_.resize(static_cast<uint64_t>(highest) - static_cast<uint64_t>(lowest) + 1);
    std::fill(h.dense_.begin(), h.dense_.end(), kNone);
  } else {
    h.sparse_.reserve(launches);
  }
  h.launches_.reserve(launches);
  for (const LineLaunches& line : lines)
    for (auto [corr, time] : line.launched()) {
      uint32_t& slot = dense ? h.dense_[static_cast<uint64_t>(corr) - static_cast<uint64_t>(lowest)]
                             : h.sparse_.try_emplace(corr, kNone).first->second;
      if (slot == kNone) {
        slot = static_cast<uint32_t>(h.launches_.size());
        h.launches_.resize(h.launches_.size() + 1);
      }
      h.launches_[slot] = {line.line, time};
    }

  std::unordered_map<uint32_t, std::vector<Window>> raw;
  for (LineLaunches& line : lines)
    if (!line.windows.empty()) raw[line.line] = std::move(line.windows);
  for (auto& [li, ws] : raw) {
    std::sort(ws.begin(), ws.end(), [](const Window& a, const Window& b) {
      return a.begin != b.begin ? a.begin < b.begin : a.end > b.end;
    });
    std::vector<uint32_t>& ids = h.by_line_[li];
    for (const Window& w : ws) {
      // Keep the outermost of nested windows so that a thread's windows are disjoint.
      if (!ids.empty() && w.begin <= h.windows_[ids.back()].end) continue;
      ids.push_back(static_cast<uint32_t>(h.windows_.size()));
      h.windows_.push_back(w);
    }
  }
  if (h.windows_.empty()) return h;
  // Each launch line goes with the window line whose windows contain most of its launches.
  std::map<std::pair<uint32_t, uint32_t>, uint64_t> hits;
  for (const Launch& launch : h.launches_)
    for (const auto& [wl, ids] : h.by_line_)
      if (h.containing(ids, launch.time)) ++hits[{launch.line, wl}];
  std::unordered_map<uint32_t, uint64_t> best;
  for (const auto& [key, n] : hits) {
    auto [it, inserted] = best.try_emplace(key.first, n);
    if (inserted || n > it->second) {
      it->second = n;
      h.window_line_of_[key.first] = key.second;
    }
  }
  return h;
}

const HostLaunches::Launch* HostLaunches::find(int64_t correlation) const {
  uint32_t slot = kNone;
  if (!dense_.empty()) {
    uint64_t k = static_cast<uint64_t>(correlation) - static_cast<uint64_t>(first_id_);
    if (k < dense_.size()) slot = dense_[k];
  } else if (auto it = sparse_.find(correlation); it != sparse_.end()) {
    slot = it->second;
  }
  return slot == kNone ? nullptr : &launches_[slot];
}

std::optional<uint32_t> HostLaunches::window_of(int64_t correlation) const {
  const Launch* launch = find(correlation);
  if (!launch) return std::nullopt;
  auto t = window_line_of_.find(launch->line);
  if (t == window_line_of_.end()) return std::nullopt;
  return containing(by_line_.at(t->second), launch->time);
}

std::optional<uint32_t> HostLaunches::containing(const std::vector<uint32_t>& ids,
                                                 int64_t time) const {
  auto it = std::upper_bound(ids.begin(), ids.end(), time,
                             [&](int64_t t, uint32_t w) { return t < windows_[w].begin; });
  if (it == ids.begin()) return std::nullopt;
  uint32_t w = *(it - 1);
  if (time > windows_[w].end) return std::nullopt;
  return w;
}

}  // namespace jaxprof
