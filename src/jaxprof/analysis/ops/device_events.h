// Which events are a device's op executions: GPU stream lines, TPU "XLA Ops" lines, the "XLA
// Thunks" lines of nsys-jax archives, and on the CPU backend the host-thread events that carry an
// hlo_op stat.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "jaxprof/model/profile.h"

namespace jaxprof {

struct DeviceLines {
  uint32_t plane = 0;
  std::string name;             // the plane name, or "/device:CPU:N" on the CPU backend
  std::vector<uint32_t> lines;  // lines holding the device's op events
  // CPU backend: the plane is /host:CPU, only events with an hlo_op count, and one host plane
  // serves every CPU device: `ordinal` picks this device's events by their device_ordinal stat.
  bool hlo_ops_only = false;
  int64_t ordinal = -1;
  std::shared_ptr<const std::vector<int32_t>> ordinals;  // per event of the plane, from first_event
  uint32_t first_event = 0;

  // Events on the device's lines (those `counts` rejects included): the size of its work.
  uint64_t line_events(const Profile& profile) const {
    uint64_t n = 0;
    for (uint32_t li : lines) n += profile.lines[li].event_count;
    return n;
  }

  bool counts(const Events& ev, uint32_t e) const {
    if (!hlo_ops_only) return true;
    if (ev.hlo_op[e] == 0) return false;
    return !ordinals || (*ordinals)[e - first_event] == ordinal;
  }
};

bool is_op_line(const Profile& profile, const Line& line);

// Devices with at least one op event: hosts in load order, each host's devices in natural order
// (GPU:2 before GPU:10, whatever order the file stores planes in). When no /device:
// plane has op events, the /host:CPU planes with hlo_op events are the devices (CPU backend).
std::vector<DeviceLines> op_devices(const Profile& profile);

}  // namespace jaxprof
