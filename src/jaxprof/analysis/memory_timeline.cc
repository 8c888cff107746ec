#include "jaxprof/analysis/memory_timeline.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <map>
#include <span>
#include <unordered_map>

#include "jaxprof/analysis/line_filter.h"
#include "jaxprof/analysis/parallel_parts.h"

namespace jaxprof {
namespace {

constexpr std::string_view kAllocationEvent = "MemoryAllocation";
constexpr std::string_view kDeallocationEvent = "MemoryDeallocation";

// The stats read from each allocator event (names as XLA's and TensorFlow's tracers write them).
enum Stat : size_t {
  kAllocatorName,
  kDeviceOrdinal,
  kIndexOnHost,
  kBytesAllocated,
  kBytesReserved,
  kBytesAvailable,
  kPeakBytesInUse,
  kFragmentation,
  kRequestedBytes,
  kAllocationBytes,
  kAddress,
  kTfOp,
  kShape,
  kDataType,
  kRegionType,
  kStatCount,
};
constexpr std::array<std::string_view, kStatCount> kStatNames = {"allocator_name",
                                                                 "device_ordinal",
                                                                 "index_on_host",
                                                                 "bytes_allocated",
                                                                 "bytes_reserved",
                                                                 "bytes_available",
                                                                 "peak_bytes_in_use",
                                                                 "fragmentation",
                                                                 "requested_bytes",
                                                                 "allocation_bytes",
                                                                 "addr",
                                                                 "tf_op",
                                                                 "shape",
                                                                 "data_type",
                                                                 "region_type"};

// Events handed to the analysis per line; 100k allocator events are worth a thread.
constexpr uint64_t kEventsPerPart = 100000;

struct AllocatorEvent {
  int64_t time_ps = 0;
  uint32_t line = 0;
  uint32_t order = 0;  // in the line's file order
  bool allocation = false;
  std::optional<int64_t> in_use, reserved, available, peak, requested, bytes, address, dtype;
  std::optional<double> fragmentation;
  std::string_view op, shape, region;
};

// How the events name their allocator: XProf keys memory profiles the same way.
struct AllocatorKey {
  uint32_t host = 0;
  uint8_t kind = 0;  // 0 allocator_name, 1 device_ordinal, 2 index_on_host, 3 none
  std::string_view name;
  int64_t number = 0;
  auto operator<=>(const AllocatorKey&) const = default;
};

struct LineEvents {
  std::vector<AllocatorEvent> events;
  std::vector<AllocatorKey> keys;  // one per event
};

std::optional<int64_t> int_of(const std::optional<StatValue>& v) {
  return v ? v->as_int() : std::nullopt;
}

void read_line(const Profile& p, uint32_t li, std::span<const uint8_t> want,
               std::span<const StringId> names, const std::vector<uint8_t>& is_allocation,
               LineEvents& out) {
  const uint32_t host = p.plane_of_line(li).host;
  uint32_t order = 0;
  p.visit_line(li, want, names,
               [&](const ScannedEvent& e, std::span<const std::optional<StatValue>> s) {
                 AllocatorEvent& ev = out.events.emplace_back();
                 ev.time_ps = e.start_ps;
                 ev.line = li;
                 ev.order = order++;
                 ev.allocation = is_allocation[e.metadata] != 0;
                 ev.in_use = int_of(s[kBytesAllocated]);
                 ev.reserved = int_of(s[kBytesReserved]);
                 ev.available = int_of(s[kBytesAvailable]);
                 ev.peak = int_of(s[kPeakBytesInUse]);
                 ev.requested = int_of(s[kRequestedBytes]);
                 ev.bytes = int_of(s[kAllocationBytes]);
                 ev.address = int_of(s[kAddress]);
                 ev.dtype = int_of(s[kDataType]);
                 if (s[kFragmentation]) ev.fragmentation = s[kFragmentation]->as_double();
                 if (s[kTfOp] && s[kTfOp]->is_text()) ev.op = s[kTfOp]->str;
                 if (s[kShape] && s[kShape]->is_text()) ev.shape = s[kShape]->str;
                 if (s[kRegionType] && s[kRegionType]->is_text()) ev.region = s[kRegionType]->str;
                 AllocatorKey& key = out.keys.emplace_back();
                 key.host = host;
                 key.kind = 3;
                 if (s[kAllocatorName] && s[kAllocatorName]->is_text()) {
                   key.kind = 0;
                   key.name = s[kAllocatorName]->str;
                 } else if (auto d = int_of(s[kDeviceOrdinal])) {
                   key.kind = 1;
                   key.number = *d;
                 } else if (auto i = int_of(s[kIndexOnHost])) {
                   key.kind = 2;
                   key.number = *i;
                 }
               });
}

// The device kind ("GPU", "TPU") of a host's device planes when they are all of one kind.
std::string host_device_kind(const Profile& p, uint32_t host) {
  std::string kind;
  for (const Plane& plane : p.planes) {
    if (plane.host != host || !is_device_plane(plane.kind)) continue;
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

// Keeps at most `max_points` points: consecutive points in boxes, the highest of each box.
std::vector<MemoryPoint> sample(const std::vector<MemoryPoint>& points, size_t max_points) {
  if (max_points == 0 || points.size() <= max_points) return points;
  std::vector<MemoryPoint> out;
  out.reserve(max_points);
  for (size_t b = 0; b < max_points; ++b) {
    size_t from = points.size() * b / max_points, to = points.size() * (b + 1) / max_points;
    const MemoryPoint* best = &points[from];
    for (size_t i = from + 1; i < to; ++i)
      if (points[i].in_use + points[i].reserved > best->in_use + best->reserved) best = &points[i];
    out.push_back(*best);
  }
  return out;
}

std::string human(int64_t bytes) { return fmt::format("{} bytes", bytes); }

// The allocations made during the capture that are still live after event `upto` (inclusive),
// grouped; matched to their frees by address, as the allocator hands addresses out.
void live_at(const std::vector<AllocatorEvent>& events, size_t upto, const MemoryTimelineOptions& o,
             AllocatorMemory& a) {
  struct Live {
    size_t event;
  };
  std::unordered_map<int64_t, Live> live;
  uint64_t without_address = 0, without_size = 0;
  for (size_t i = 0; i <= upto; ++i) {
    const AllocatorEvent& e = events[i];
    if (!e.address) {
      without_address += e.allocation;
      continue;
    }
    if (e.allocation) {
      live[*e.address] = {i};
    } else {
      live.erase(*e.address);
    }
  }
  std::map<std::tuple<std::string_view, std::string_view, int64_t, std::string_view>,
           LiveAllocationGroup>
      groups;
  for (const auto& [address, l] : live) {
    const AllocatorEvent& e = events[l.event];
    if (!e.bytes || *e.bytes < 0) {
      ++without_size;
      continue;
    }
    LiveAllocationGroup& g = groups[{e.op, e.shape, e.dtype.value_or(0), e.region}];
    if (g.count == 0) {
      g.op = std::string(e.op);
      g.shape = std::string(e.shape);
      g.dtype = tf_dtype_name(e.dtype.value_or(0));
      g.region = std::string(e.region);
      g.first_allocated_ps = e.time_ps;
    }
    g.first_allocated_ps = std::min(g.first_allocated_ps, e.time_ps);
    ++g.count;
    g.bytes += static_cast<uint64_t>(*e.bytes);
    g.requested_bytes += static_cast<uint64_t>(std::max<int64_t>(e.requested.value_or(0), 0));
    ++a.live_at_peak;
    a.live_at_peak_bytes += static_cast<uint64_t>(*e.bytes);
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

void summarize(std::vector<AllocatorEvent>& events, const MemoryTimelineOptions& o,
               AllocatorMemory& a) {
  std::sort(events.begin(), events.end(), [](const AllocatorEvent& x, const AllocatorEvent& y) {
    if (x.time_ps != y.time_ps) return x.time_ps < y.time_ps;
    return x.line != y.line ? x.line < y.line : x.order < y.order;
  });
  a.first_ps = events.front().time_ps;
  a.last_ps = events.back().time_ps;
  std::optional<size_t> peak_at;
  bool any_reserved = false, peak_decreases = false;
  std::optional<int64_t> last_peak;
  std::string rise_note;
  std::vector<MemoryPoint> points;
  for (size_t i = 0; i < events.size(); ++i) {
    const AllocatorEvent& e = events[i];
    (e.allocation ? a.allocations : a.deallocations)++;
    any_reserved |= e.reserved.has_value();
    if (e.fragmentation)
      a.max_fragmentation =
          std::max(a.max_fragmentation.value_or(*e.fragmentation), *e.fragmentation);
    if (e.peak) {
      // The allocator's running peak: where it rises, this event set it.
      if (last_peak && *e.peak < *last_peak) peak_decreases = true;
      if (last_peak && *e.peak > *last_peak && e.in_use && *e.in_use != *e.peak &&
          rise_note.empty())
        rise_note =
            fmt::format("peak_bytes_in_use rose to {} at an event whose bytes_allocated is {}",
                        *e.peak, *e.in_use);
      if (e.in_use && *e.in_use > *e.peak && rise_note.empty())
        rise_note = fmt::format("bytes_allocated {} exceeds the allocator's peak_bytes_in_use {}",
                                *e.in_use, *e.peak);
      a.lifetime_peak_bytes_in_use =
          std::max(a.lifetime_peak_bytes_in_use.value_or(*e.peak), *e.peak);
      last_peak = e.peak;
    }
    if (!e.in_use) continue;
    const int64_t with_reserved = *e.in_use + e.reserved.value_or(0);
    points.push_back({e.time_ps, *e.in_use, e.reserved.value_or(0)});
    if (!a.start_bytes_in_use) a.start_bytes_in_use = e.in_use;
    a.end_bytes_in_use = e.in_use;
    if (!a.peak_bytes_in_use || *e.in_use > *a.peak_bytes_in_use) {
      a.peak_bytes_in_use = e.in_use;
      a.peak_ps = e.time_ps;
      peak_at = i;
      a.peak_events = 0;
    }
    a.peak_events += *e.in_use == *a.peak_bytes_in_use;
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
  if (peak.available) a.capacity_bytes = *peak.in_use + peak.reserved.value_or(0) + *peak.available;
  a.fragmentation_at_peak = peak.fragmentation;
  if (!a.lifetime_peak_bytes_in_use) {
    a.notes.push_back("no event carries peak_bytes_in_use: the allocator's own peak is unknown");
  } else if (*a.lifetime_peak_bytes_in_use < *a.peak_bytes_in_use) {
    a.notes.push_back(fmt::format(
        "allocator stats disagree: bytes_allocated reached {} but peak_bytes_in_use is only {}",
        *a.peak_bytes_in_use, *a.lifetime_peak_bytes_in_use));
  } else {
    a.peak_in_capture = *a.lifetime_peak_bytes_in_use == *a.peak_bytes_in_use;
  }
  live_at(events, *peak_at, o, a);
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

MemoryTimeline compute_memory_timeline(const Profile& p, const MemoryTimelineOptions& o) {
  MemoryTimeline result;
  std::vector<uint8_t> want(p.event_metadata.size(), 0), is_allocation(p.event_metadata.size(), 0);
  LineFilter filter(p);
  bool any = false;
  for (uint32_t m = 0; m < p.event_metadata.size(); ++m) {
    std::string_view name = p.str(p.event_metadata[m].name);
    if (name != kAllocationEvent && name != kDeallocationEvent) continue;
    want[m] = 1;
    is_allocation[m] = name == kAllocationEvent;
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
  std::array<StringId, kStatCount> names;
  for (size_t i = 0; i < kStatCount; ++i) names[i] = p.strings.find(kStatNames[i]);
  std::vector<LineEvents> per_line(lines.size());
  {
    Profile::ReadOnlyScope reading(p);
    for_each_parallel(costs, parts_for(total, kEventsPerPart), [&](size_t k, size_t) {
      read_line(p, lines[k], want, names, is_allocation, per_line[k]);
    });
  }

  std::map<AllocatorKey, std::vector<AllocatorEvent>> by_allocator;
  for (LineEvents& l : per_line) {
    result.events += l.events.size();
    for (size_t i = 0; i < l.events.size(); ++i)
      by_allocator[l.keys[i]].push_back(std::move(l.events[i]));
    l = LineEvents{};
  }
  if (result.events == 0) {
    result.no_events_reason =
        "no allocator events (MemoryAllocation/MemoryDeallocation) in this profile. XLA's GPU and "
        "TPU runtimes record them while the profiler runs (the host tracer, on by default); the "
        "CPU backend does not record them. Static memory from the compiled programs' buffer "
        "assignment is shown instead when the profile carries HLO protos.";
    return result;
  }
  for (auto& [key, events] : by_allocator) {
    AllocatorMemory a;
    name_allocator(p, key, a);
    if (!matches(a, o.allocator)) continue;
    summarize(events, o, a);
    result.allocators.push_back(std::move(a));
  }
  std::stable_sort(
      result.allocators.begin(), result.allocators.end(),
      [](const AllocatorMemory& x, const AllocatorMemory& y) {
        if (x.host != y.host) return x.host < y.host;
        // Devices first, in number order, then host memory, then the unknown.
        auto rank = [](const AllocatorMemory& a) {
          return a.memory_space == "device" ? 0 : a.memory_space == "host" ? 1 : 2;
        };
        if (rank(x) != rank(y)) return rank(x) < rank(y);
        int nx = device_number(x.device), ny = device_number(y.device);
        if (x.device.substr(0, x.device.find(':')) != y.device.substr(0, y.device.find(':')))
          return x.device < y.device;
        if (nx != ny) return nx < ny;
        return x.allocator < y.allocator;
      });
  return result;
}

}  // namespace jaxprof
