// Flow arrows from each collective instance's first arrival to its last: the device that
// started the instance first to the one that started it last (the one the others waited for),
// across devices and hosts, so that the wait reads on the timeline.
#pragma once

#include <cstdint>
#include <map>
#include <string_view>
#include <utility>
#include <vector>

#include "jaxprof/analysis/collectives/collectives.h"
#include "jaxprof/analysis/ops/device_events.h"
#include "jaxprof/model/profile.h"
#include "jaxprof/render/perfetto/trace_sink.h"

namespace jaxprof {

class ArrivalFlows {
 public:
  // `collectives` with instances and members (CollectivesOptions); `devices` the op devices the
  // writer exports.
  ArrivalFlows(const Profile& profile, const std::vector<DeviceLines>& devices,
               const CollectivesResult& collectives);

  struct Ends {
    uint64_t out = 0, in = 0;  // the arrow leaving (first arrival) or reaching (last) op event e
  };
  // The arrows at op event e of devices[device].
  Ends at(size_t device, uint32_t e) const;
  uint64_t arrows() const { return arrows_; }

 private:
  struct End {
    std::string_view op;
    Ends ends;
  };
  const Profile& p_;
  // Per exported device, by start on the timeline: the instance ends there (several ops may
  // start at one instant: the op name tells them apart).
  std::vector<std::map<int64_t, std::vector<End>>> ends_;
  uint64_t arrows_ = 0;
};

}  // namespace jaxprof
