// A profile's partial summaries (model/partial/partial.h): each analysis extracts its own part
// of every host (extract_* beside its compute_*, partial_build.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "jaxprof/model/event_filter_spec.h"
#include "jaxprof/model/partial/partial.h"

namespace jaxprof {

// Event-level filters a profile's extraction applies (a partial file has none).
struct PartialExtractOptions {
  uint32_t parts = kPartAll;
  EventFilterSpec op_filter;      // ops: every filter applies at extraction
  std::string device;             // collectives --device
  EventFilterSpec kernel_filter;  // kernels: every filter applies at extraction
  SteadyStateOptions steady;      // what ops, timeline, collectives and kernels leave out
  uint8_t flame_bys = 7;          // flame: the FlameBy trees to keep (bit per FlameBy)
};

// One partial per host of the profile, in the profile's host order.
std::vector<HostPartial> extract_partials(const Profile& profile,
                                          const PartialExtractOptions& options);

}  // namespace jaxprof
