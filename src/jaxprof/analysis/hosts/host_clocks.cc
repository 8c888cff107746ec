#include "jaxprof/analysis/hosts/host_clocks.h"

#include "jaxprof/analysis/hosts/hosts.h"
#include "jaxprof/model/profile.h"

namespace jaxprof {

std::map<std::string, HostClock> host_clocks(const Profile& p) {
  std::map<std::string, HostClock> clocks;
  if (p.hosts.size() < 2 || p.clocks_aligned) return clocks;
  for (const HostRow& h : compute_hosts(p).hosts)
    if (h.clock_offset_ps)
      clocks[h.host] = {*h.clock_offset_ps, h.clock_offset_error_ps.value_or(0)};
  return clocks;
}

}  // namespace jaxprof
