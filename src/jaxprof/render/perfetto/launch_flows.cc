#include "jaxprof/render/perfetto/launch_flows.h"

namespace jaxprof {
namespace {

// A correlation id decoded with the event (not absent, not left in the file).
bool known(int64_t c) { return c != Events::kNoStat && c != Events::kStatInFile; }

}  // namespace

LaunchFlows::LaunchFlows(const Profile& p, const std::vector<DeviceLines>& devices)
    : p_(p), launches_(p.hosts.size()), kernels_(p.hosts.size()) {
  const Events& ev = p.events;
  for (const DeviceLines& d : devices) {
    uint32_t host = p.planes[d.plane].host;
    for (uint32_t li : d.lines) {
      const Line& line = p.lines[li];
      if (!line.kernel_ids) continue;
      for (uint32_t e = line.first_event; e < line.first_event + line.event_count; ++e)
        if (known(ev.correlation_id[e])) kernels_[host].insert(ev.correlation_id[e]);
    }
  }
  for (uint32_t h = 0; h < p.hosts.size(); ++h)
    if (!kernels_[h].empty()) launches_[h] = HostLaunches::index(p, h, /*all=*/true);
}

uint64_t LaunchFlows::into_kernel(uint32_t host, uint32_t e) const {
  const Events& ev = p_.events;
  if (!launches_[host] || !known(ev.correlation_id[e])) return 0;
  int64_t c = ev.correlation_id[e];
  return launches_[host]->has_launch(c) ? id(host, c) : 0;
}

uint64_t LaunchFlows::out_of_launch(uint32_t host, int64_t correlation) const {
  return kernels_[host].contains(correlation) ? id(host, correlation) : 0;
}

}  // namespace jaxprof
