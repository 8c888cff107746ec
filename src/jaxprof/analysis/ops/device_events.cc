#include "jaxprof/analysis/ops/device_events.h"

#include <algorithm>
#include <map>
#include <set>

#include "jaxprof/analysis/ops/natural_order.h"
#include "jaxprof/model/op_lines.h"

namespace jaxprof {

bool is_op_line(const Profile& profile, const Line& line) {
  return is_op_line_name(profile.str(line.name));
}

namespace {

// Hosts in load order, each host's devices in natural order (GPU:2 before GPU:10).
std::vector<DeviceLines> in_natural_order(const Profile& profile, std::vector<DeviceLines> out) {
  std::stable_sort(out.begin(), out.end(), [&](const DeviceLines& a, const DeviceLines& b) {
    uint32_t ha = profile.planes[a.plane].host, hb = profile.planes[b.plane].host;
    if (ha != hb) return ha < hb;
    return natural_less(a.name, b.name);
  });
  return out;
}

}  // namespace

std::vector<DeviceLines> op_devices(const Profile& profile) {
  std::vector<DeviceLines> out;
  for (uint32_t pi = 0; pi < profile.planes.size(); ++pi) {
    const Plane& plane = profile.planes[pi];
    if (!is_device_plane(plane.kind)) continue;
    DeviceLines d;
    d.plane = pi;
    d.name = std::string(profile.str(plane.name));
    for (uint32_t li : plane.lines) {
      const Line& line = profile.lines[li];
      if (line.event_count > 0 && is_op_line(profile, line)) d.lines.push_back(li);
    }
    if (!d.lines.empty()) out.push_back(std::move(d));
  }
  if (!out.empty()) return in_natural_order(profile, std::move(out));

  const StringId ordinal_name = profile.strings.find("device_ordinal");
  for (uint32_t pi = 0; pi < profile.planes.size(); ++pi) {
    const Plane& plane = profile.planes[pi];
    if (plane.kind != PlaneKind::kHostCpu) continue;
    profile.require_lines(plane.lines);
    // The plane's events are contiguous: lines are laid out plane by plane.
    uint32_t lo = UINT32_MAX, hi = 0;
    for (uint32_t li : plane.lines) {
      const Line& line = profile.lines[li];
      if (line.event_count == 0) continue;
      lo = std::min(lo, line.first_event);
      hi = std::max(hi, line.first_event + line.event_count);
    }
    if (lo >= hi) continue;
    auto ordinals = std::make_shared<std::vector<int32_t>>(hi - lo, -1);
    std::map<int32_t, std::vector<uint32_t>> lines_by_ordinal;
    // The event's first own device_ordinal stat, read by its id in the plane: this runs for
    // every host op each time the devices are listed, and decoding all of an event's stats
    // (what event_stats does) cost several times more.
    std::unique_ptr<StatReader> reader;
    if (ordinal_name != UINT32_MAX && ordinal_name != 0) {
      const StringId names[1] = {ordinal_name};
      reader = profile.stat_reader(pi, names);
    }
    std::optional<StatValue> value[1];
    const Events& ev = profile.events;
    for (uint32_t li : plane.lines) {
      const Line& line = profile.lines[li];
      std::set<int32_t> seen;
      for (uint32_t e = line.first_event; e < line.first_event + line.event_count; ++e) {
        if (ev.hlo_op[e] == 0) continue;
        int32_t ordinal = -1;
        if (reader) {
          reader->read(
              ScannedEvent{ev.start_ps[e], ev.duration_ps[e], ev.metadata[e], e, ev.raw_offset(e)}, value);
          if (value[0]) ordinal = static_cast<int32_t>(value[0]->as_int().value_or(-1));
        }
        (*ordinals)[e - lo] = ordinal;
        if (seen.insert(ordinal).second) lines_by_ordinal[ordinal].push_back(li);
      }
    }
    for (auto& [ordinal, lines] : lines_by_ordinal) {
      DeviceLines d;
      d.plane = pi;
      d.hlo_ops_only = true;
      d.lines = std::move(lines);
      d.ordinal = ordinal;
      d.ordinals = ordinals;
      d.first_event = lo;
      // Without device_ordinal stats the host plane is the one device.
      d.name = ordinal < 0 ? std::string(profile.str(plane.name))
                           : "/device:CPU:" + std::to_string(ordinal);
      out.push_back(std::move(d));
    }
  }
  return in_natural_order(profile, std::move(out));
}

}  // namespace jaxprof
