// Whether the hosts of a profile read from one directory can be the hosts of one capture. A run
// directory that JAX writes holds one file per machine of one session; a folder of profiles
// gathered by hand does not, and reading it as one profile would merge unrelated runs (and call
// the difference between them a straggler).
#pragma once

#include <string>
#include <vector>

#include "jaxprof/model/profile.h"

namespace jaxprof {

// The reasons the profile's hosts cannot be one capture (empty when nothing says so):
// - two files say they were captured on the same machine (XSpace hostnames): one machine writes
//   one file per session;
// - one file holds TPU devices and another GPU devices;
// - the files' captures began more than kMaxSessionStartSpreadNs apart (when both clocks are
//   wall clocks).
std::vector<std::string> reasons_not_one_session(const Profile& profile);

inline constexpr int64_t kMaxSessionStartSpreadNs = int64_t{600} * 1000000000;  // 10 minutes

}  // namespace jaxprof
