// What the roofline says when the fields it costs ops from are missing from the profile: a
// profile without HLO (no HloProtos on /host:metadata, a trace that dropped them, no HLO files
// given) leaves every op it cannot cost from stats unknown, and kernel events without an
// `hlo_op` stat (traces converted by XProf's trace viewer) are matched to their instruction by
// kernel name only. Each becomes one warning naming the figures it affects (docs/design.md,
// "Missing fields and what they affect").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "jaxprof/analysis/cost/roofline.h"

namespace jaxprof {

// Reasons an op's cost is unknown, as `detail` gives them.
inline constexpr const char* kNoHloInProfile = "the profile carries no HLO";
inline constexpr const char* kMatchedByKernelName = "(by kernel name)";

class MissingHloTally {
 public:
  // Every op row of a device, before the rows are cut to --top.
  void count(const RooflineOp& op);
  // Another tally's counts (another host's), as if its rows had been counted here.
  void add(const MissingHloCounts& other);
  const MissingHloCounts& counts() const { return n_; }
  // The warnings, none when nothing was missing.
  void warn(std::vector<std::string>& warnings) const;

 private:
  MissingHloCounts n_;
};

}  // namespace jaxprof
