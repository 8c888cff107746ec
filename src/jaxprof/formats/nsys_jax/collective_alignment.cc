#include "jaxprof/formats/nsys_jax/collective_alignment.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "jaxprof/model/collective_opcode.h"

namespace jaxprof {

namespace {

int64_t median(std::vector<int64_t>& v) {
  size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + mid, v.end());
  int64_t hi = v[mid];
  if (v.size() % 2) return hi;
  int64_t lo = *std::max_element(v.begin(), v.begin() + mid);
  return lo + (hi - lo) / 2;
}

}  // namespace

ClockSkew collective_end_skews(const Profile& p) {
  ClockSkew out;
  out.host_skew_ps.assign(p.hosts.size(), 0);
  struct Device {
    uint32_t plane, modules, thunks;
  };
  std::vector<Device> devices;
  std::vector<uint32_t> needed;
  for (uint32_t pi = 0; pi < p.planes.size(); ++pi) {
    const Plane& pl = p.planes[pi];
    if (pl.kind != PlaneKind::kGpu && pl.kind != PlaneKind::kTpu) continue;
    Device d{pi, UINT32_MAX, UINT32_MAX};
    for (uint32_t li : pl.lines) {
      std::string_view n = p.str(p.lines[li].name);
      if (n == "XLA Modules") d.modules = li;
      if (n == "XLA Thunks" || n == "XLA Ops") d.thunks = li;
    }
    if (d.modules == UINT32_MAX || d.thunks == UINT32_MAX) continue;
    devices.push_back(d);
    needed.push_back(d.modules);
    needed.push_back(d.thunks);
  }
  out.devices = devices.size();
  if (devices.size() < 2) return out;
  p.require_lines(needed);

  const Events& ev = p.events;
  using Key = std::tuple<ProgramId, uint32_t, StringId, uint32_t>;
  std::map<Key, std::vector<std::pair<uint32_t, int64_t>>> ends;  // (device, end)
  for (uint32_t d = 0; d < devices.size(); ++d) {
    const Line& ml = p.lines[devices[d].modules];
    const Line& tl = p.lines[devices[d].thunks];
    std::vector<int64_t> starts(ml.event_count);
    std::vector<uint32_t> execution(ml.event_count);
    std::map<uint32_t, uint32_t> runs;  // module -> executions so far
    for (uint32_t k = 0; k < ml.event_count; ++k) {
      starts[k] = ev.start_ps[ml.first_event + k];
      execution[k] = runs[ev.module[ml.first_event + k]]++;
    }
    std::map<std::pair<uint32_t, StringId>, uint32_t> occurrence;
    for (uint32_t e = tl.first_event; e < tl.first_event + tl.event_count; ++e) {
      const ModuleKey& mk = p.modules[ev.module[e]];
      const HloModule* m = p.hlo.find(hlo_program_key(mk.program_id), p.str(mk.name));
      const HloInstruction* in = m ? m->find(p.str(ev.hlo_op[e])) : nullptr;
      if (!in || collective_base_opcode(in->opcode).empty() || in->opcode.ends_with("-done"))
        continue;
      auto it = std::upper_bound(starts.begin(), starts.end(), ev.start_ps[e]);
      if (it == starts.begin()) continue;
      uint32_t k = static_cast<uint32_t>(it - starts.begin() - 1);
      uint32_t nth = occurrence[{k, ev.hlo_op[e]}]++;
      ends[Key{mk.program_id, execution[k], ev.hlo_op[e], nth}].push_back({d, ev.end_ps(e)});
    }
  }
  std::vector<std::vector<int64_t>> host_skews(p.hosts.size());
  for (auto& [key, v] : ends) {
    if (v.size() != devices.size()) continue;  // not seen on every device (or seen twice)
    __int128 sum = 0;
    for (auto& [d, end] : v) sum += end;
    int64_t mean = static_cast<int64_t>(sum / static_cast<__int128>(v.size()));
    for (auto& [d, end] : v) host_skews[p.planes[devices[d].plane].host].push_back(end - mean);
    ++out.collectives;
  }
  for (size_t h = 0; h < host_skews.size(); ++h)
    if (!host_skews[h].empty()) out.host_skew_ps[h] = median(host_skews[h]);
  return out;
}

}  // namespace jaxprof
