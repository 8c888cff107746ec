// What the analyses share while they extract a profile's partials (partial.h): the profile's op
// devices, which host partial and device each becomes, and the host clock of each host. Each
// analysis extracts its own part (extract_* next to its compute_*).
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "jaxprof/analysis/ops/device_events.h"
#include "jaxprof/analysis/partial/extract_partials.h"
#include "jaxprof/model/partial/partial.h"

namespace jaxprof {

struct PartialBuild {
  const Profile& p;
  std::vector<HostPartial>& hosts;   // one per profile host
  std::vector<DeviceLines> devices;  // op_devices(p)
  struct Where {
    uint32_t host = 0, device = 0;
  };
  std::vector<Where> where;  // per op device: its host partial and its index there
  SteadyStateOptions steady;  // what the extraction sets apart

  PartialBuild(const Profile& profile, std::vector<HostPartial>& out);

  HostPartial& host_of(size_t op_device) { return hosts[where[op_device].host]; }
  PartialDevice& device(size_t op_device) {
    return hosts[where[op_device].host].devices[where[op_device].device];
  }
  // Subtract from a profile time to get the host's own clock (relative to its base_ns).
  int64_t shift_ps(uint32_t host) const { return (p.hosts[host].base_ns - p.base_ns) * 1000; }
  int64_t device_shift_ps(size_t op_device) const { return shift_ps(where[op_device].host); }
  // A profile module (index into Profile::modules) in a host's module table.
  uint32_t module(uint32_t host, uint32_t profile_module);

 private:
  std::vector<std::unordered_map<uint32_t, uint32_t>> modules_;
};

// What the HLO index (else the event's tf_op stat) says of op event `e`'s HLO op; empty when the
// event has no hlo_op.
struct OpDescription {
  std::string opcode, op_name, source;
  std::string category;  // from the HLO instruction when the index knows it, else the name
};
// `memory`: the event's own stats or line say it is a copy or fill (memory_op.h), which makes its
// category memcpy whatever its HLO says.
OpDescription describe_op_event(const Profile& p, uint32_t plane, uint32_t e, bool memory = false);

void extract_op_groups(PartialBuild& b, const EventFilterSpec& filter);
void extract_timelines(PartialBuild& b);
void extract_executions(PartialBuild& b, bool ops);
void extract_steps(PartialBuild& b);
void extract_collectives(PartialBuild& b, const std::string& device_filter);
void extract_compile(PartialBuild& b, bool totals_only);
void extract_kernels(PartialBuild& b, const EventFilterSpec& filter);
void extract_flame(PartialBuild& b, uint8_t bys);  // bit per FlameBy
// What each host sets apart, and the roles of the executions extract_executions extracted.
void extract_steady(PartialBuild& b);

}  // namespace jaxprof
