// The critical path of each step on the exported timeline (`export --critical-path`): a derived
// "critical path" track on each process the path runs through (a device's plane for its ops and
// idle gaps, the host's CPU plane for host work and host gaps), each segment a slice, with an
// arrow from each segment to the next of its step, so that the path reads across devices and
// hosts.
#pragma once

#include <cstdint>
#include <vector>

#include "jaxprof/analysis/critical_path/critical_path.h"
#include "jaxprof/analysis/ops/device_events.h"
#include "jaxprof/model/profile.h"
#include "jaxprof/render/perfetto/trace_sink.h"

namespace jaxprof {

class CriticalPathTrack {
 public:
  // `planes`: the exported planes' indices in process order; `devices` the op devices.
  CriticalPathTrack(const Profile& profile, const std::vector<DeviceLines>& devices,
                    const std::vector<uint32_t>& planes, const CriticalPathResult& result);

  // Writes the track of the k-th exported plane (process `pid`); returns its slices.
  uint64_t write(size_t k, int pid, TraceSink& out) const;
  // Segments on no exported plane (their device or host has none), left out.
  uint64_t left_out() const { return left_out_; }

  static constexpr int kTid = 800000;

 private:
  struct Placed {
    const CriticalStep* step;
    const PathSegment* segment;
    uint64_t from = 0, to = 0;  // arrows in (from the step's previous segment) and out
  };
  std::vector<std::vector<Placed>> by_plane_;
  uint64_t left_out_ = 0;
};

}  // namespace jaxprof
