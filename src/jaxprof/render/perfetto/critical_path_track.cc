#include "jaxprof/render/perfetto/critical_path_track.h"

#include <fmt/format.h>

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>

#include "jaxprof/render/perfetto/perfetto.h"

namespace jaxprof {

CriticalPathTrack::CriticalPathTrack(const Profile& p, const std::vector<DeviceLines>& devices,
                                     const std::vector<uint32_t>& planes,
                                     const CriticalPathResult& result)
    : by_plane_(planes.size()) {
  std::map<uint32_t, size_t> slot;  // profile plane -> exported process
  for (size_t k = 0; k < planes.size(); ++k) slot[planes[k]] = k;
  // A device's segments go to its plane; a host's to its CPU plane.
  std::map<std::pair<std::string_view, std::string_view>, size_t> of;
  for (const DeviceLines& d : devices)
    if (auto s = slot.find(d.plane); s != slot.end())
      of[{p.hosts[p.planes[d.plane].host].name, d.name}] = s->second;
  for (const auto& [plane, k] : slot)
    if (p.planes[plane].kind == PlaneKind::kHostCpu)
      of.try_emplace({p.hosts[p.planes[plane].host].name, std::string_view()}, k);
  uint64_t next = kPathFlowIds;
  for (const CriticalStep& step : result.steps) {
    // The previous segment placed, as (process, index): the lists grow, so no pointers.
    constexpr size_t kNone = SIZE_MAX;
    size_t previous = kNone, previous_index = 0;
    for (const PathSegment& seg : step.path) {
      auto it = of.find({seg.host, seg.device});
      if (it == of.end()) {
        ++left_out_;
        previous = kNone;
        continue;
      }
      std::vector<Placed>& list = by_plane_[it->second];
      list.push_back(Placed{&step, &seg});
      if (previous != kNone) by_plane_[previous][previous_index].to = list.back().from = ++next;
      previous = it->second;
      previous_index = list.size() - 1;
    }
  }
}

uint64_t CriticalPathTrack::write(size_t k, int pid, TraceSink& out) const {
  const std::vector<Placed>& placed = by_plane_[k];
  if (placed.empty()) return 0;
  out.thread(pid, kTid, "critical path", /*derived=*/true);
  for (const Placed& x : placed) {
    const PathSegment& s = *x.segment;
    TraceArgs args;
    args.set("step", std::to_string(x.step->number));
    args.set("kind", json_string_html_safe(s.kind));
    args.set("category", json_string_html_safe(s.category));
    if (!s.device.empty()) args.set("device", json_string_html_safe(s.device));
    SliceFlow flow;
    flow.arrival_out = x.to;
    flow.arrival_in = x.from;
    out.slice(pid, kTid, s.name, {}, s.start_ps, s.duration_ps, &args, flow);
  }
  return placed.size();
}

}  // namespace jaxprof
