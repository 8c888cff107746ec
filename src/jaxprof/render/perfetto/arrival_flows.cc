#include "jaxprof/render/perfetto/arrival_flows.h"

#include <string>

namespace jaxprof {

ArrivalFlows::ArrivalFlows(const Profile& p, const std::vector<DeviceLines>& devices,
                           const CollectivesResult& c)
    : p_(p), ends_(devices.size()) {
  // The collectives' devices (by host and name) as the writer's.
  std::map<std::pair<std::string_view, std::string_view>, size_t> index;
  for (size_t d = 0; d < devices.size(); ++d)
    index[{p.hosts[p.planes[devices[d].plane].host].name, devices[d].name}] = d;
  std::vector<int64_t> exported(c.devices.size(), -1);
  for (size_t d = 0; d < c.devices.size(); ++d)
    if (auto it = index.find({c.devices[d].host, c.devices[d].device}); it != index.end())
      exported[d] = static_cast<int64_t>(it->second);
  for (const CollectiveInstance& in : c.instances) {
    if (in.members.size() < 2) continue;
    // Members come by start: the first is the first arrival, the last the one waited for.
    const CollectiveInstance::Member &first = in.members.front(), &last = in.members.back();
    const int64_t from = exported[first.device], to = exported[last.device];
    if (from < 0 || to < 0 || first.begin_ps == last.begin_ps) continue;
    const uint64_t id = kArrivalFlowIds + ++arrows_;
    ends_[from][first.begin_ps].push_back({in.name, {id, 0}});
    ends_[to][last.begin_ps].push_back({in.name, {0, id}});
  }
}

ArrivalFlows::Ends ArrivalFlows::at(size_t device, uint32_t e) const {
  const auto& by_start = ends_[device];
  auto it = by_start.find(p_.events.start_ps[e]);
  if (it == by_start.end()) return {};
  const std::string_view op = p_.str(p_.events.hlo_op[e]);
  for (const End& end : it->second)
    if (end.op == op) return end.ends;
  return {};
}

}  // namespace jaxprof
