#include "jaxprof/model/invariants.h"

#include <fmt/format.h>

#include "jaxprof/common/error.h"
#include "jaxprof/model/profile.h"
#include "jaxprof/model/time_range.h"

namespace jaxprof {

namespace {

const std::string& file_of_plane(const Profile& p, uint32_t plane) {
  static const std::string kNone;
  if (plane >= p.planes.size() || p.planes[plane].host >= p.hosts.size()) return kNone;
  return p.hosts[p.planes[plane].host].path;
}

const std::string& first_file(const Profile& p) {
  static const std::string kNone;
  return p.hosts.empty() ? kNone : p.hosts.front().path;
}

[[noreturn]] void broken(const std::string& file, const std::string& what) {
  throw InputError(file, "inconsistent profile: " + what);
}

}  // namespace

void check_profile_structure(const Profile& p) {
  if (p.planes.empty()) {
    const std::string& file = first_file(p);
    std::string reason = "no events to analyse: it holds no device or thread timelines";
    // What the importer passed over tells why (events without timestamps, other phases).
    for (const std::string& w : p.warnings)
      reason += "; " + (w.starts_with(file + ": ") ? w.substr(file.size() + 2) : w);
    throw InputError(file, reason);
  }
  const uint64_t events = p.events.size();
  for (uint32_t pi = 0; pi < p.planes.size(); ++pi) {
    const Plane& plane = p.planes[pi];
    if (plane.host >= p.hosts.size() || plane.source >= p.sources.size())
      broken(file_of_plane(p, pi),
             fmt::format("plane {} names a host or reader that does not exist", pi));
    for (uint32_t li : plane.lines)
      if (li >= p.lines.size() || p.lines[li].plane != pi)
        broken(file_of_plane(p, pi),
               fmt::format("plane {} lists line {}, which is not its own", pi, li));
  }
  for (uint32_t li = 0; li < p.lines.size(); ++li) {
    const Line& line = p.lines[li];
    if (line.plane >= p.planes.size())
      broken(first_file(p),
             fmt::format("line {} names plane {}, which does not exist", li, line.plane));
    if (line.source >= p.sources.size() || uint64_t{line.first_event} + line.event_count > events)
      broken(file_of_plane(p, line.plane),
             fmt::format("line {} holds events {} to {} of {}", li, line.first_event,
                         uint64_t{line.first_event} + line.event_count, events));
  }
  // Entry 0, the stand-in for ids a plane does not declare, names plane 0: there is one.
  for (uint32_t mi = 0; mi < p.event_metadata.size(); ++mi)
    if (p.event_metadata[mi].plane >= p.planes.size())
      broken(first_file(p), fmt::format("event metadata {} names plane {}, which does not exist",
                                        mi, p.event_metadata[mi].plane));
  for (const ModuleKey& m : p.modules)
    if (m.name >= p.strings.size()) broken(first_file(p), "a module names no string");
  // Every host's events are placed on the common clock in picoseconds (Host::base_ns - base_ns).
  for (const Host& h : p.hosts) {
    int64_t shift;
    if (!ps_since(h.base_ns, p.base_ns, shift))
      throw InputError(h.path, fmt::format("its clock starts at {} ns, the earliest file's at {} "
                                           "ns: too far apart to be one timeline",
                                           h.base_ns, p.base_ns));
  }
}

namespace {

// Why an event of `line` breaks the model's promises (metadata index, start, duration), or "".
std::string event_fault(const Profile& p, const Line& line, uint32_t m, int64_t start,
                        int64_t duration) {
  if (m >= p.event_metadata.size() || (m != 0 && p.event_metadata[m].plane != line.plane))
    return fmt::format("names event metadata {}, which its plane does not have", m);
  if (!time_in_range(start))
    return fmt::format("starts {} ps from the profile's start, beyond the {} ps it can hold", start,
                       kMaxTimePs);
  if (!duration_in_range(duration))
    return fmt::format("lasts {} ps, outside [0, {}]", duration, kMaxTimePs);
  return "";
}

// Why an event's device clock timing (Events::device_start_ps/device_duration_ps) breaks the
// model's promise, or "".
std::string device_clock_fault(const Events& ev, uint32_t e) {
  const int64_t start = ev.device_start_ps[e], duration = ev.device_duration_ps[e];
  if (start == Events::kNoStat && duration == Events::kNoStat) return "";
  if (start < 0 || start > kMaxTimePs || duration < 0 || duration > kMaxTimePs)
    return fmt::format("has device_offset_ps {} and device_duration_ps {}: outside [0, {}]",
                       start, duration, kMaxTimePs);
  return "";
}

[[noreturn]] void event_broken(const Profile& p, const Line& line, uint64_t index,
                               const std::string& what) {
  throw InputError(file_of_plane(p, line.plane),
                   fmt::format("event {} of line '{}' {}", index, p.str(line.name), what));
}

}  // namespace

void check_scanned_events(const Profile& p, uint32_t li, std::span<const ScannedEvent> events) {
  const Line& line = p.lines[li];
  for (size_t k = 0; k < events.size(); ++k) {
    const ScannedEvent& e = events[k];
    bool ok = e.metadata < p.event_metadata.size() &&
              (e.metadata == 0 || p.event_metadata[e.metadata].plane == line.plane) &&
              time_in_range(e.start_ps) && duration_in_range(e.duration_ps);
    if (!ok) [[unlikely]]
      event_broken(p, line, k, event_fault(p, line, e.metadata, e.start_ps, e.duration_ps));
  }
}

void check_line_events(const Profile& p, std::span<const uint32_t> lines) {
  const Events& ev = p.events;
  const auto metadata_count = static_cast<uint32_t>(p.event_metadata.size());
  // This runs over every decoded event: the loop below only ORs comparisons together, and reads
  // 20 bytes per event, which bounds its cost by memory bandwidth (2.9M events: 3 to 8 ms on a
  // loaded 2-core machine). The plane of each metadata entry comes from a compact table, the
  // stand-in (0) matching every plane, when there are more events to check than entries (a few
  // lines decoded at a time would pay for the whole table each time).
  constexpr uint32_t kAnyPlane = UINT32_MAX;
  constexpr auto kMaxTimeU = static_cast<uint64_t>(kMaxTimePs);
  uint64_t events = 0;
  for (uint32_t li : lines) events += p.lines[li].event_count;
  std::vector<uint32_t> plane_of;
  if (events >= metadata_count) {
    plane_of.resize(metadata_count);
    for (uint32_t m = 0; m < metadata_count; ++m) plane_of[m] = p.event_metadata[m].plane;
    if (metadata_count > 0) plane_of[0] = kAnyPlane;
  }
  auto plane_of_metadata = [&](uint32_t m) {
    if (!plane_of.empty()) return plane_of[m];
    return m == 0 ? kAnyPlane : p.event_metadata[m].plane;
  };
  for (uint32_t li : lines) {
    const Line& line = p.lines[li];
    const uint32_t first = line.first_event, end = first + line.event_count;
    bool bad = false;
    for (uint32_t e = first; e < end; ++e) {
      const uint32_t m = ev.metadata[e];
      const uint32_t plane = m < metadata_count ? plane_of_metadata(m) : line.plane + 1;
      // Unsigned sums fold both bounds of a range into one comparison.
      bad |= (plane != line.plane) & (plane != kAnyPlane);
      bad |= static_cast<uint64_t>(ev.start_ps[e]) + kMaxTimePs > 2 * kMaxTimeU;
      bad |= static_cast<uint64_t>(ev.duration_ps[e]) > kMaxTimeU;
    }
    // The device clock's own offset and duration (TPU ops), where the line has them: either both
    // absent or both within [0, kMaxTimePs], so that an end on that clock cannot overflow.
    if (line.device_clock)
      for (uint32_t e = first; e < end; ++e) {
        const int64_t ds = ev.device_start_ps[e], dd = ev.device_duration_ps[e];
        if (ds == Events::kNoStat && dd == Events::kNoStat) continue;
        bad |= static_cast<uint64_t>(ds) > kMaxTimeU;
        bad |= static_cast<uint64_t>(dd) > kMaxTimeU;
      }
    if (!bad) [[likely]]
      continue;
    for (uint32_t e = first; e < end; ++e) {  // find the culprit for the message
      std::string what = event_fault(p, line, ev.metadata[e], ev.start_ps[e], ev.duration_ps[e]);
      if (what.empty() && line.device_clock) what = device_clock_fault(ev, e);
      if (!what.empty()) event_broken(p, line, e - first, what);
    }
  }
}

}  // namespace jaxprof
