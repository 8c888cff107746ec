// Flow arrows from each host launch to the kernels it started: on each host, a host event and a
// device kernel with the same correlation id (the host launch index of
// analysis/timeline/host_launches.h says which correlation ids have a launch).
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_set>
#include <vector>

#include "jaxprof/analysis/ops/device_events.h"
#include "jaxprof/analysis/timeline/host_launches.h"
#include "jaxprof/model/profile.h"

namespace jaxprof {

class LaunchFlows {
 public:
  LaunchFlows(const Profile& profile, const std::vector<DeviceLines>& devices);

  // The arrow into kernel event e (0 when its launch is not in the profile).
  uint64_t into_kernel(uint32_t host, uint32_t e) const;
  // The arrow out of a host event with this correlation id (0 when no kernel has it).
  uint64_t out_of_launch(uint32_t host, int64_t correlation) const;

 private:
  static uint64_t id(uint32_t host, int64_t correlation) {
    return static_cast<uint64_t>(correlation) * 65536u + host + 1;
  }
  const Profile& p_;
  std::vector<std::optional<HostLaunches>> launches_;  // per host with kernels
  std::vector<std::unordered_set<int64_t>> kernels_;   // per host: kernels' correlation ids
};

}  // namespace jaxprof
