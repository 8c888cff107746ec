// Whether the host files read from one directory can be the hosts of one capture. A run
// directory that JAX writes holds one file per machine of one session; a folder of profiles
// gathered by hand does not, and reading it as one profile would merge unrelated runs (and call
// the difference between them a straggler).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "jaxprof/model/partial/partial.h"
#include "jaxprof/io/discover.h"
#include "jaxprof/model/profile.h"

namespace jaxprof {

// What one host file says about the capture it came from: enough to compare files without
// keeping their events (a reader that streams hosts one by one can collect these).
struct CaptureFacts {
  std::string file;                      // the file name, for messages
  std::vector<std::string> captured_on;  // XSpace hostnames
  bool gpu = false, tpu = false;         // device planes it holds
  int64_t start_ns = 0;                  // earliest line timestamp (Host::base_ns)
};

// One entry per host of the profile, in host order.
std::vector<CaptureFacts> capture_facts(const Profile& profile);

// The same from a host's partial (the one host it holds).
CaptureFacts capture_facts(const HostPartial& host);

// The reasons the files cannot be the hosts of one capture (empty when nothing says so):
// - two files say they were captured on the same machine (XSpace hostnames): one machine writes
//   one file per session;
// - one file holds TPU devices and another GPU devices;
// - the files' captures began more than kMaxSessionStartSpreadNs apart (when both clocks are
//   wall clocks).
std::vector<std::string> reasons_not_one_session(const std::vector<CaptureFacts>& files);

// Host files found in one directory must be the hosts of one capture: throws InputError (naming
// the directory, what was found and how to pick) otherwise. Files named one by one on the command
// line are the user's choice: a warning is added to `warnings` then.
void check_one_capture(const ProfileFiles& files, const std::vector<CaptureFacts>& facts,
                       std::vector<std::string>& warnings);

inline constexpr int64_t kMaxSessionStartSpreadNs = int64_t{600} * 1000000000;  // 10 minutes

}  // namespace jaxprof
