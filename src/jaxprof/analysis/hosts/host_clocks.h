// Each host's clock against the others' (what `jaxprof hosts` estimates from when collectives
// end), in the shape a timeline needs to put several hosts on one clock.
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace jaxprof {

class Profile;

// A host's recorded clock against the reference (the median host): ahead by offset_ps, the
// estimate off by at most about error_ps.
struct HostClock {
  int64_t offset_ps = 0;
  int64_t error_ps = 0;
};

// By host name, the hosts with an estimate; empty for one host, for hosts put on one clock at
// import (Profile::clocks_aligned), or when no collective spans several hosts.
std::map<std::string, HostClock> host_clocks(const Profile& profile);

}  // namespace jaxprof
