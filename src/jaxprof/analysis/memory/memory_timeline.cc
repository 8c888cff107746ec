#include "jaxprof/analysis/memory/memory_timeline.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <functional>
#include <map>
#include <span>
#include <unordered_map>

#include "jaxprof/analysis/ops/line_filter.h"
#include "jaxprof/common/parallel_parts.h"

namespace jaxprof {
namespace {

constexpr std::string_view kAllocationEvent = "MemoryAllocation";
constexpr std::string_view kDeallocationEvent = "MemoryDeallocation";

// The stats of an allocator event (names as XLA's and TensorFlow's tracers write them). Read with
// every event: what the timeline, the peak and the pairing of frees need, at most eight names
// (the stat reader's fast path: more would decode every stat of every event).
enum EagerStat : size_t {
  kAllocatorName,
  kDeviceOrdinal,
  kIndexOnHost,
  kBytesAllocated,
  kBytesReserved,
  kPeakBytesInUse,
  kAllocationBytes,
  kAddress,
  kEagerCount,
};
constexpr std::array<std::string_view, kEagerCount> kEagerNames = {
    "allocator_name", "device_ordinal",    "index_on_host",    "bytes_allocated",
    "bytes_reserved", "peak_bytes_in_use", "allocation_bytes", "addr"};
// Read afterwards from the file, for the few events they describe: the peak event and the
// allocations live at it.
enum LazyStat : size_t {
  kBytesAvailable,
  kFragmentation,
  kRequestedBytes,
  kTfOp,
  kShape,
  kDataType,
  kRegionType,
  kLazyCount,
};
constexpr std::array<std::string_view, kLazyCount> kLazyNames = {
    "bytes_available", "fragmentation", "requested_bytes", "tf_op",
    "shape",           "data_type",     "region_type"};
using LazyNames = std::array<StringId, kLazyCount>;
using LazyStats = std::array<std::optional<StatValue>, kLazyCount>;

// Allocator events handed to the analysis per thread: 100k events' worth of lines.
constexpr uint64_t kEventsPerPart = 100000;

// One allocator event as read in the scan (compact: profiles hold hundreds of thousands).
struct AllocatorEvent {
  enum Flags : uint8_t {
    kAllocation = 1,
    kHasInUse = 2,
    kHasReserved = 4,
    kHasPeak = 8,
    kHasBytes = 16,
    kHasAddress = 32,
  };
  int64_t time_ps = 0;
  int64_t in_use = 0, reserved = 0, peak = 0, bytes = 0, address = 0;
  uint32_t line = 0;
  uint64_t raw = 0;    // where its stats are, for the lazy ones
  uint32_t event = 0;  // index into Profile::events when its line is decoded
  uint32_t key = 0;    // the allocator: index into its line's keys, then the global one
  uint8_t flags = 0;

  bool has(Flags f) const { return (flags & f) != 0; }
  bool allocation() const { return has(kAllocation); }
  std::optional<int64_t> in_use_bytes() const {
    return has(kHasInUse) ? std::optional(in_use) : std::nullopt;
  }
};

// How the events name their allocator: XProf keys memory profiles the same way.
struct AllocatorKey {
  uint32_t host = 0;
  uint8_t kind = 0;  // 0 allocator_name, 1 device_ordinal, 2 index_on_host, 3 none
  std::string_view name;
  int64_t number = 0;
  auto operator<=>(const AllocatorKey&) const = default;
};

// A call of a jitted JAX function on a host thread: JAX's dispatch wraps each in a
// `PjitFunction(NAME)` event, around the transfers and the executions (whose output and temporary
// buffers it allocates). Read in the same pass as the allocator events, on their lines only.
struct JaxCall {
  int64_t start_ps = 0, end_ps = 0;
  uint32_t metadata = 0;
};
constexpr std::string_view kJaxCallPrefix = "PjitFunction(";

// What each event metadata entry is to this analysis.
enum class MemoryEventKind : uint8_t { kOther, kAllocation, kDeallocation, kJaxCall };

struct LineEvents {
  std::vector<AllocatorEvent> events;  // in file order
  std::vector<AllocatorKey> keys;      // distinct, indexed by AllocatorEvent::key
  std::vector<JaxCall> calls;          // in file order
};

// Per line holding allocator events, its JAX calls by start (longest first at one start).
using JaxCallsByLine = std::unordered_map<uint32_t, std::vector<JaxCall>>;

// A number stat, or its decimal text (Chrome traces carry stats as strings).
std::optional<double> number_of(const StatValue& v) {
  if (std::optional<double> d = v.as_double()) return d;
  if (!v.is_text()) return std::nullopt;
  double d = 0;
  auto [end, error] = std::from_chars(v.str.data(), v.str.data() + v.str.size(), d);
  if (error != std::errc() || end != v.str.data() + v.str.size()) return std::nullopt;
  return d;
}

LazyStats read_lazy(const Profile& p, const LazyNames& names, const AllocatorEvent& e) {
  LazyStats out;
  ScannedEvent s;
  s.start_ps = e.time_ps;
  s.raw = e.raw;
  s.event = e.event;
  p.find_own_event_stats(p.lines[e.line].plane, s, names, out);
  return out;
}

void read_line(const Profile& p, uint32_t li, std::span<const uint8_t> want,
               std::span<const StringId> names, const std::vector<MemoryEventKind>& kinds,
               LineEvents& out) {
  const uint32_t host = p.plane_of_line(li).host;
  std::map<AllocatorKey, uint32_t> index;
  AllocatorKey last{};
  uint32_t last_index = UINT32_MAX;
  p.visit_line(
      li, want, names, [&](const ScannedEvent& e, std::span<const std::optional<StatValue>> s) {
        if (kinds[e.metadata] == MemoryEventKind::kJaxCall) {
          out.calls.push_back({e.start_ps, e.start_ps + e.duration_ps, e.metadata});
          return;
        }
        AllocatorEvent& ev = out.events.emplace_back();
        ev.time_ps = e.start_ps;
        ev.line = li;
        ev.raw = e.raw;
        ev.event = e.event;
        ev.flags =
            kinds[e.metadata] == MemoryEventKind::kAllocation ? AllocatorEvent::kAllocation : 0;
        auto take = [&](size_t stat, int64_t& to, AllocatorEvent::Flags flag) {
          if (!s[stat]) return;
          if (std::optional<int64_t> v = s[stat]->as_int()) {
            to = *v;
            ev.flags |= flag;
          }
        };
        take(kBytesAllocated, ev.in_use, AllocatorEvent::kHasInUse);
        take(kBytesReserved, ev.reserved, AllocatorEvent::kHasReserved);
        take(kPeakBytesInUse, ev.peak, AllocatorEvent::kHasPeak);
        take(kAllocationBytes, ev.bytes, AllocatorEvent::kHasBytes);
        take(kAddress, ev.address, AllocatorEvent::kHasAddress);
        AllocatorKey key;
        key.host = host;
        key.kind = 3;
        if (s[kAllocatorName] && s[kAllocatorName]->is_text()) {
          key.kind = 0;
          key.name = s[kAllocatorName]->str;
        } else if (auto d = s[kDeviceOrdinal] ? s[kDeviceOrdinal]->as_int() : std::nullopt) {
          key.kind = 1;
          key.number = *d;
        } else if (auto i = s[kIndexOnHost] ? s[kIndexOnHost]->as_int() : std::nullopt) {
          key.kind = 2;
          key.number = *i;
        }
        // Consecutive events are mostly of one allocator.
        if (last_index == UINT32_MAX || !(key == last)) {
          auto [it, added] = index.emplace(key, static_cast<uint32_t>(out.keys.size()));
          if (added) out.keys.push_back(key);
          last = key;
          last_index = it->second;
        }
        ev.key = last_index;
      });
}

// The device kind ("GPU", "TPU") of a host's device planes when they are all of one kind.
std::string host_device_kind(const Profile& p, uint32_t host) {
  std::string kind;
  for (const Plane& plane : p.planes) {
    if (plane.host != host || !is_device_plane(plane.kind)) continue;
    if (is_custom_device_plane(p.str(plane.name))) continue;
    std::string k = plane.kind == PlaneKind::kGpu   ? "GPU"
                    : plane.kind == PlaneKind::kTpu ? "TPU"
                                                    : "";
    if (k.empty() || (!kind.empty() && k != kind)) return "";
    kind = k;
  }
  return kind;
}

bool contains_host(std::string_view name) {
  for (size_t i = 0; i + 4 <= name.size(); ++i) {
    bool match = true;
    for (size_t j = 0; j < 4 && match; ++j)
      match = std::tolower(static_cast<unsigned char>(name[i + j])) == "host"[j];
    if (match) return true;
  }
  return false;
}

// Names the allocator and the device it serves: "GPU_3_bfc" is GPU:3's device memory, the
// "..._host_bfc" allocators hold pinned host memory, ordinals name a device of the host's kind.
void name_allocator(const Profile& p, const AllocatorKey& key, AllocatorMemory& a) {
  a.host = p.hosts[key.host].name;
  if (key.kind == 0) {
    a.allocator = std::string(key.name);
    if (contains_host(key.name)) {
      a.device = "host";
      a.memory_space = "host";
      return;
    }
    // KIND_N_... (GPU_0_bfc, TPU_1_...).
    size_t us = key.name.find('_');
    if (us != std::string_view::npos && us > 0) {
      size_t digits = us + 1;
      while (digits < key.name.size() && std::isdigit(static_cast<unsigned char>(key.name[digits])))
        ++digits;
      if (digits > us + 1 && (digits == key.name.size() || key.name[digits] == '_')) {
        a.device =
            fmt::format("{}:{}", key.name.substr(0, us), key.name.substr(us + 1, digits - us - 1));
        a.memory_space = "device";
      }
    }
    return;
  }
  if (key.kind == 3) {
    a.allocator = "(unnamed)";
    return;
  }
  a.allocator = fmt::format("device {}", key.number);
  std::string kind = host_device_kind(p, key.host);
  a.device = kind.empty() ? a.allocator : fmt::format("{}:{}", kind, key.number);
  a.memory_space = "device";
}

bool matches(const AllocatorMemory& a, const std::string& filter) {
  return filter.empty() || a.allocator.find(filter) != std::string::npos ||
         a.device.find(filter) != std::string::npos;
}

// Keeps about `max_points` points: consecutive points in boxes, and of each box its highest in
// use and its highest in use + reserved (one point when they coincide), in time order; so the
// peaks always survive.
std::vector<MemoryPoint> sample(const std::vector<MemoryPoint>& points, size_t max_points) {
  if (max_points == 0 || points.size() <= max_points) return points;
  std::vector<MemoryPoint> out;
  out.reserve(2 * max_points);
  for (size_t b = 0; b < max_points; ++b) {
    size_t from = points.size() * b / max_points, to = points.size() * (b + 1) / max_points;
    size_t in_use = from, total = from;
    for (size_t i = from + 1; i < to; ++i) {
      if (points[i].in_use > points[in_use].in_use) in_use = i;
      if (points[i].in_use + points[i].reserved > points[total].in_use + points[total].reserved)
        total = i;
    }
    out.push_back(points[std::min(in_use, total)]);
    if (in_use != total) out.push_back(points[std::max(in_use, total)]);
  }
  return out;
}

std::string human(int64_t bytes) { return fmt::format("{} bytes", bytes); }

// NAME of the innermost `PjitFunction(NAME)` call around `time_ps` on `line`, "" when none: the
// jitted JAX function the thread was running.
std::string jax_function_at(const Profile& p, const JaxCallsByLine& calls, uint32_t line,
                            int64_t time_ps) {
  auto it = calls.find(line);
  if (it == calls.end()) return {};
  const std::vector<JaxCall>& v = it->second;
  auto after = std::upper_bound(v.begin(), v.end(), time_ps,
                                [](int64_t t, const JaxCall& c) { return t < c.start_ps; });
  // The latest start before the time whose call still runs is the innermost around it.
  for (auto c = after; c != v.begin();) {
    --c;
    if (c->end_ps >= time_ps) {
      std::string_view name = p.str(p.event_metadata[c->metadata].name);
      return std::string(
          name.substr(kJaxCallPrefix.size(), name.size() - kJaxCallPrefix.size() - 1));
    }
  }
  return {};
}

// The allocations made during the capture that are still live after event `upto` (inclusive),
// grouped; matched to their frees by address, as the allocator hands addresses out. What they
// were (op, shape, dtype, region, requested bytes) is read for them alone.
void live_at(const Profile& p, const LazyNames& names, const JaxCallsByLine& calls,
             const std::vector<AllocatorEvent>& events, size_t upto, const MemoryTimelineOptions& o,
             AllocatorMemory& a) {
  std::unordered_map<int64_t, size_t> live;  // address -> event
  uint64_t without_address = 0, without_size = 0;
  for (size_t i = 0; i <= upto; ++i) {
    const AllocatorEvent& e = events[i];
    if (!e.has(AllocatorEvent::kHasAddress)) {
      without_address += e.allocation();
      continue;
    }
    if (e.allocation()) {
      live[e.address] = i;
    } else {
      live.erase(e.address);
    }
  }
  std::vector<size_t> live_events;
  live_events.reserve(live.size());
  for (const auto& [address, i] : live) live_events.push_back(i);
  std::sort(live_events.begin(), live_events.end());  // the same groups in any hash order
  // Allocations whose producer recorded neither op nor shape (JAX on GPU) are told apart by the
  // JAX function that made them and by size.
  std::map<std::tuple<std::string, std::string, int64_t, std::string, std::string, int64_t>,
           LiveAllocationGroup>
      groups;
  for (size_t i : live_events) {
    const AllocatorEvent& e = events[i];
    if (!e.has(AllocatorEvent::kHasBytes) || e.bytes < 0) {
      ++without_size;
      continue;
    }
    LazyStats s = read_lazy(p, names, e);
    auto text = [&](size_t k) {
      return s[k] && s[k]->is_text() ? std::string(s[k]->str) : std::string();
    };
    const int64_t dtype = s[kDataType] ? s[kDataType]->as_int().value_or(0) : 0;
    const bool anonymous = text(kTfOp).empty() && text(kShape).empty();
    std::string function = anonymous ? jax_function_at(p, calls, e.line, e.time_ps) : std::string();
    LiveAllocationGroup& g = groups[{text(kTfOp), text(kShape), dtype, text(kRegionType), function,
                                     anonymous ? e.bytes : -1}];
    if (g.count == 0) {
      g.op = text(kTfOp);
      g.function = std::move(function);
      g.shape = text(kShape);
      g.dtype = tf_dtype_name(dtype);
      g.region = text(kRegionType);
      g.first_allocated_ps = e.time_ps;
    }
    ++g.count;
    g.bytes += static_cast<uint64_t>(e.bytes);
    const int64_t requested = s[kRequestedBytes] ? s[kRequestedBytes]->as_int().value_or(0) : 0;
    g.requested_bytes += static_cast<uint64_t>(std::max<int64_t>(requested, 0));
    ++a.live_at_peak;
    a.live_at_peak_bytes += static_cast<uint64_t>(e.bytes);
  }
  if (without_address)
    a.notes.push_back(fmt::format(
        "{} allocations carry no addr stat: they cannot be matched to their frees and are left "
        "out of what was live at the peak",
        without_address));
  if (without_size)
    a.notes.push_back(fmt::format(
        "{} allocations live at the peak carry no allocation_bytes stat: left out of the groups",
        without_size));
  std::vector<LiveAllocationGroup> sorted;
  sorted.reserve(groups.size());
  for (auto& [k, g] : groups) sorted.push_back(std::move(g));
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto& x, const auto& y) {
    return x.bytes != y.bytes ? x.bytes > y.bytes : x.count > y.count;
  });
  a.live_groups = sorted.size();
  if (o.top && sorted.size() > o.top) sorted.resize(o.top);
  a.largest_at_peak = std::move(sorted);
  if (a.peak_bytes_in_use && !without_size) {
    int64_t before = *a.peak_bytes_in_use - static_cast<int64_t>(a.live_at_peak_bytes);
    if (before >= 0) {
      a.allocated_before_capture_bytes = before;
    } else {
      a.notes.push_back(fmt::format(
          "the allocations live at the peak add up to {}, more than the {} bytes_allocated "
          "says: some frees were not recorded",
          human(static_cast<int64_t>(a.live_at_peak_bytes)), human(*a.peak_bytes_in_use)));
    }
  }
}

// `events` in line order, each line's in file order: a stable sort by time gives the order of
// (time, line, file position).
void summarize(const Profile& p, const LazyNames& names, const JaxCallsByLine& calls,
               std::vector<AllocatorEvent>& events, const MemoryTimelineOptions& o,
               AllocatorMemory& a) {
  auto by_time = [](const AllocatorEvent& x, const AllocatorEvent& y) {
    return x.time_ps < y.time_ps;
  };
  if (!std::is_sorted(events.begin(), events.end(), by_time))
    std::stable_sort(events.begin(), events.end(), by_time);
  a.first_ps = events.front().time_ps;
  a.last_ps = events.back().time_ps;
  std::optional<size_t> peak_at;
  bool any_reserved = false, peak_decreases = false;
  std::optional<int64_t> last_peak;
  std::string rise_note;
  std::vector<MemoryPoint> points;
  points.reserve(events.size());
  for (size_t i = 0; i < events.size(); ++i) {
    const AllocatorEvent& e = events[i];
    (e.allocation() ? a.allocations : a.deallocations)++;
    any_reserved |= e.has(AllocatorEvent::kHasReserved);
    const std::optional<int64_t> in_use = e.in_use_bytes();
    if (e.has(AllocatorEvent::kHasPeak)) {
      // The allocator's running peak: where it rises, this event set it.
      if (last_peak && e.peak < *last_peak) peak_decreases = true;
      if (last_peak && e.peak > *last_peak && in_use && *in_use != e.peak && rise_note.empty())
        rise_note =
            fmt::format("peak_bytes_in_use rose to {} at an event whose bytes_allocated is {}",
                        e.peak, *in_use);
      if (in_use && *in_use > e.peak && rise_note.empty())
        rise_note = fmt::format("bytes_allocated {} exceeds the allocator's peak_bytes_in_use {}",
                                *in_use, e.peak);
      a.lifetime_peak_bytes_in_use =
          std::max(a.lifetime_peak_bytes_in_use.value_or(e.peak), e.peak);
      last_peak = e.peak;
    }
    if (!in_use) continue;
    const int64_t reserved = e.has(AllocatorEvent::kHasReserved) ? e.reserved : 0;
    const int64_t with_reserved = *in_use + reserved;
    points.push_back({e.time_ps, *in_use, reserved});
    if (!a.start_bytes_in_use) a.start_bytes_in_use = in_use;
    a.end_bytes_in_use = in_use;
    if (!a.peak_bytes_in_use || *in_use > *a.peak_bytes_in_use) {
      a.peak_bytes_in_use = in_use;
      a.peak_ps = e.time_ps;
      peak_at = i;
      a.peak_events = 0;
    }
    a.peak_events += *in_use == *a.peak_bytes_in_use;
    if (!a.peak_with_reserved || with_reserved > *a.peak_with_reserved) {
      a.peak_with_reserved = with_reserved;
      a.peak_with_reserved_ps = e.time_ps;
    }
  }
  if (!any_reserved) a.peak_with_reserved.reset();
  a.timeline_events = points.size();
  a.timeline = sample(points, o.max_points);
  if (!rise_note.empty()) a.notes.push_back("allocator stats disagree: " + rise_note);
  if (peak_decreases)
    a.notes.push_back(
        "peak_bytes_in_use goes down during the capture (the allocator's stats were reset?): the "
        "lifetime peak is the highest value seen");
  if (!peak_at) {
    a.notes.push_back(
        "no event carries a bytes_allocated stat: bytes in use and the peak are unknown");
    return;
  }
  const AllocatorEvent& peak = events[*peak_at];
  LazyStats at_peak = read_lazy(p, names, peak);
  if (std::optional<int64_t> available =
          at_peak[kBytesAvailable] ? at_peak[kBytesAvailable]->as_int() : std::nullopt)
    a.capacity_bytes =
        peak.in_use + (peak.has(AllocatorEvent::kHasReserved) ? peak.reserved : 0) + *available;
  if (at_peak[kFragmentation]) a.fragmentation_at_peak = number_of(*at_peak[kFragmentation]);
  if (!a.lifetime_peak_bytes_in_use) {
    a.notes.push_back("no event carries peak_bytes_in_use: the allocator's own peak is unknown");
  } else if (*a.lifetime_peak_bytes_in_use < *a.peak_bytes_in_use) {
    a.notes.push_back(fmt::format(
        "allocator stats disagree: bytes_allocated reached {} but peak_bytes_in_use is only {}",
        *a.peak_bytes_in_use, *a.lifetime_peak_bytes_in_use));
  } else {
    a.peak_in_capture = *a.lifetime_peak_bytes_in_use == *a.peak_bytes_in_use;
  }
  live_at(p, names, calls, events, *peak_at, o, a);
}

int device_number(std::string_view device) {
  size_t colon = device.rfind(':');
  if (colon == std::string_view::npos) return -1;
  int n = 0;
  for (char c : device.substr(colon + 1)) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return -1;
    n = n * 10 + (c - '0');
    if (n > 1'000'000) return -1;
  }
  return n;
}

}  // namespace

std::string tf_dtype_name(int64_t value) {
  // TensorFlow's DataType enum (types.proto); reference types (value + 100) end in "_ref".
  static constexpr std::array<std::string_view, 31> kNames = {"",
                                                              "float",
                                                              "double",
                                                              "int32",
                                                              "uint8",
                                                              "int16",
                                                              "int8",
                                                              "string",
                                                              "complex64",
                                                              "int64",
                                                              "bool",
                                                              "qint8",
                                                              "quint8",
                                                              "qint32",
                                                              "bfloat16",
                                                              "qint16",
                                                              "quint16",
                                                              "uint16",
                                                              "complex128",
                                                              "half",
                                                              "resource",
                                                              "variant",
                                                              "uint32",
                                                              "uint64",
                                                              "float8_e5m2",
                                                              "float8_e4m3fn",
                                                              "float8_e4m3fnuz",
                                                              "float8_e4m3b11fnuz",
                                                              "float8_e5m2fnuz",
                                                              "int4",
                                                              "uint4"};
  if (value >= 0 && value < static_cast<int64_t>(kNames.size())) return std::string(kNames[value]);
  if (value > 100 && value < 100 + static_cast<int64_t>(kNames.size()))
    return std::string(kNames[value - 100]) + "_ref";
  return fmt::format("dtype {}", value);
}

namespace {

// Every allocator event of the profile, by allocator, and the JAX calls on their lines.
struct ScannedAllocators {
  uint64_t events = 0;
  std::map<AllocatorKey, uint32_t> index;                 // allocator -> its events below
  std::vector<std::vector<AllocatorEvent>> by_allocator;  // each in line order, then file order
  JaxCallsByLine calls;
  LazyNames lazy{};
};

ScannedAllocators scan_allocators(const Profile& p) {
  ScannedAllocators out;
  std::vector<uint8_t> want(p.event_metadata.size(), 0);
  std::vector<MemoryEventKind> kinds(p.event_metadata.size(), MemoryEventKind::kOther);
  LineFilter filter(p);
  bool any = false;
  for (uint32_t m = 0; m < p.event_metadata.size(); ++m) {
    std::string_view name = p.str(p.event_metadata[m].name);
    if (name.starts_with(kJaxCallPrefix) && name.ends_with(')')) {
      want[m] = 1;  // read on the lines the allocator events pick, never picking a line
      kinds[m] = MemoryEventKind::kJaxCall;
    }
    if (name != kAllocationEvent && name != kDeallocationEvent) continue;
    want[m] = 1;
    kinds[m] =
        name == kAllocationEvent ? MemoryEventKind::kAllocation : MemoryEventKind::kDeallocation;
    filter.want(m);
    any = true;
  }
  std::vector<uint32_t> lines;
  std::vector<uint64_t> costs;
  uint64_t total = 0;
  if (any)
    for (uint32_t li = 0; li < p.lines.size(); ++li)
      if (filter.may_hold(li)) {
        lines.push_back(li);
        costs.push_back(p.lines[li].event_count);
        total += p.lines[li].event_count;
      }
  std::vector<uint32_t> unscannable;  // decoded first: the threads only read
  for (uint32_t li : lines)
    if (!p.can_scan(li)) unscannable.push_back(li);
  p.require_lines(unscannable);
  std::array<StringId, kEagerCount> names;
  for (size_t i = 0; i < kEagerCount; ++i) names[i] = p.strings.find(kEagerNames[i]);
  for (size_t i = 0; i < kLazyCount; ++i) out.lazy[i] = p.strings.find(kLazyNames[i]);
  std::vector<LineEvents> per_line(lines.size());
  {
    Profile::ReadOnlyScope reading(p);
    for_each_parallel(costs, parts_for(total, kEventsPerPart), [&](size_t k, size_t) {
      read_line(p, lines[k], want, names, kinds, per_line[k]);
    });
  }

  // The allocators of all lines, and each line's events under their global index (counted
  // first, so that each allocator's events are copied once into room made for them).
  std::vector<std::vector<uint32_t>> global(per_line.size());
  std::vector<size_t> counts;
  for (size_t l = 0; l < per_line.size(); ++l) {
    out.events += per_line[l].events.size();
    for (const AllocatorKey& key : per_line[l].keys) {
      auto [it, added] = out.index.emplace(key, static_cast<uint32_t>(counts.size()));
      if (added) counts.push_back(0);
      global[l].push_back(it->second);
    }
    for (const AllocatorEvent& e : per_line[l].events) ++counts[global[l][e.key]];
  }
  out.by_allocator.resize(counts.size());
  for (size_t a = 0; a < counts.size(); ++a) out.by_allocator[a].reserve(counts[a]);
  for (size_t l = 0; l < per_line.size(); ++l) {
    for (const AllocatorEvent& e : per_line[l].events)
      out.by_allocator[global[l][e.key]].push_back(e);
    std::vector<JaxCall>& line_calls = per_line[l].calls;
    if (!line_calls.empty()) {
      std::stable_sort(
          line_calls.begin(), line_calls.end(), [](const JaxCall& x, const JaxCall& y) {
            return x.start_ps != y.start_ps ? x.start_ps < y.start_ps : x.end_ps > y.end_ps;
          });
      out.calls.emplace(lines[l], std::move(line_calls));
    }
    per_line[l] = LineEvents{};
  }
  return out;
}

constexpr const char* kNoAllocatorEvents =
    "no allocator events (MemoryAllocation/MemoryDeallocation) in this profile (the CPU "
    "backend and nsys-jax record none). To get them, profile on GPU or TPU with the host "
    "tracer at level "
    "2 or more (jax.profiler's default; ProfileOptions.host_tracer_level). Static memory "
    "from the compiled programs' buffer assignment is shown instead when the profile carries "
    "HLO protos.";

// By host; devices first, in number order, then host memory, then the unknown.
bool allocator_before(const AllocatorMemory& x, const AllocatorMemory& y) {
  if (x.host != y.host) return x.host < y.host;
  auto rank = [](const AllocatorMemory& a) {
    return a.memory_space == "device" ? 0 : a.memory_space == "host" ? 1 : 2;
  };
  if (rank(x) != rank(y)) return rank(x) < rank(y);
  int nx = device_number(x.device), ny = device_number(y.device);
  if (x.device.substr(0, x.device.find(':')) != y.device.substr(0, y.device.find(':')))
    return x.device < y.device;
  if (nx != ny) return nx < ny;
  return x.allocator < y.allocator;
}

}  // namespace

MemoryTimeline compute_memory_timeline(const Profile& p, const MemoryTimelineOptions& o) {
  MemoryTimeline result;
  ScannedAllocators scanned = scan_allocators(p);
  result.events = scanned.events;
  if (result.events == 0) {
    result.no_events_reason = kNoAllocatorEvents;
    return result;
  }
  for (const auto& [key, index] : scanned.index) {
    AllocatorMemory a;
    name_allocator(p, key, a);
    if (!matches(a, o.allocator)) continue;
    summarize(p, scanned.lazy, scanned.calls, scanned.by_allocator[index], o, a);
    result.allocators.push_back(std::move(a));
  }
  std::stable_sort(result.allocators.begin(), result.allocators.end(), allocator_before);
  return result;
}

MemoryTimeline merge_memory_timelines(std::vector<MemoryTimeline> parts,
                                      const std::vector<int64_t>& shift_ps) {
  MemoryTimeline result;
  for (size_t i = 0; i < parts.size(); ++i) {
    result.events += parts[i].events;
    const int64_t shift = shift_ps[i];
    for (AllocatorMemory& a : parts[i].allocators) {
      a.first_ps += shift;
      a.last_ps += shift;
      a.peak_ps += shift;
      a.peak_with_reserved_ps += shift;
      for (LiveAllocationGroup& g : a.largest_at_peak) g.first_allocated_ps += shift;
      for (MemoryPoint& p : a.timeline) p.time_ps += shift;
      result.allocators.push_back(std::move(a));
    }
  }
  if (result.events == 0) result.no_events_reason = kNoAllocatorEvents;
  std::stable_sort(result.allocators.begin(), result.allocators.end(), allocator_before);
  return result;
}

void for_each_allocator_event(const Profile& p,
                              const std::function<void(const AllocatorEventRecord&)>& visit) {
  ScannedAllocators scanned = scan_allocators(p);
  std::vector<std::pair<AllocatorMemory, uint32_t>> allocators;
  for (const auto& [key, index] : scanned.index) {
    AllocatorMemory a;
    name_allocator(p, key, a);
    allocators.push_back({std::move(a), index});
  }
  std::stable_sort(allocators.begin(), allocators.end(),
                   [](const auto& x, const auto& y) { return allocator_before(x.first, y.first); });
  auto by_time = [](const AllocatorEvent& x, const AllocatorEvent& y) {
    return x.time_ps < y.time_ps;
  };
  for (auto& [a, index] : allocators) {
    std::vector<AllocatorEvent>& events = scanned.by_allocator[index];
    std::stable_sort(events.begin(), events.end(), by_time);  // as summarize orders them
    for (const AllocatorEvent& e : events) {
      AllocatorEventRecord r;
      r.allocator = &a;
      r.allocation = e.allocation();
      r.time_ps = e.time_ps;
      auto flag = [&](AllocatorEvent::Flags f, int64_t v) {
        return e.has(f) ? std::optional<int64_t>(v) : std::nullopt;
      };
      r.in_use = flag(AllocatorEvent::kHasInUse, e.in_use);
      r.reserved = flag(AllocatorEvent::kHasReserved, e.reserved);
      r.peak_in_use = flag(AllocatorEvent::kHasPeak, e.peak);
      r.bytes = flag(AllocatorEvent::kHasBytes, e.bytes);
      r.address = flag(AllocatorEvent::kHasAddress, e.address);
      LazyStats s = read_lazy(p, scanned.lazy, e);
      auto text = [&](size_t k) {
        return s[k] && s[k]->is_text() ? std::string(s[k]->str) : std::string();
      };
      r.requested_bytes = s[kRequestedBytes] ? s[kRequestedBytes]->as_int() : std::nullopt;
      r.available = s[kBytesAvailable] ? s[kBytesAvailable]->as_int() : std::nullopt;
      if (s[kFragmentation]) r.fragmentation = number_of(*s[kFragmentation]);
      r.op = text(kTfOp);
      r.shape = text(kShape);
      r.region = text(kRegionType);
      if (std::optional<int64_t> dtype = s[kDataType] ? s[kDataType]->as_int() : std::nullopt)
        r.dtype = tf_dtype_name(*dtype);
      visit(r);
    }
  }
}

}  // namespace jaxprof
