#include "jaxprof/analysis/partial/extract_partials.h"

#include <filesystem>

#include "jaxprof/analysis/partial/partial_build.h"

namespace jaxprof {

PartialBuild::PartialBuild(const Profile& profile, std::vector<HostPartial>& out)
    : p(profile), hosts(out), devices(op_devices(profile)), modules_(out.size()) {
  for (const DeviceLines& d : devices) {
    uint32_t host = p.planes[d.plane].host;
    HostPartial& h = hosts[host];
    where.push_back({host, static_cast<uint32_t>(h.devices.size())});
    PartialDevice& dev = h.devices.emplace_back();
    dev.name = d.name;
    dev.plane = d.plane;
    h.cpu_backend = h.cpu_backend || d.hlo_ops_only;
  }
  // Planes as their host's file numbers them (step windows are keyed by them).
  std::vector<uint32_t> first_plane(hosts.size(), UINT32_MAX);
  for (uint32_t pi = 0; pi < p.planes.size(); ++pi)
    first_plane[p.planes[pi].host] = std::min(first_plane[p.planes[pi].host], pi);
  for (size_t di = 0; di < devices.size(); ++di) device(di).plane -= first_plane[where[di].host];
}

uint32_t PartialBuild::module(uint32_t host, uint32_t profile_module) {
  auto [it, added] = modules_[host].try_emplace(profile_module, 0);
  if (added) {
    const ModuleKey& mk = p.modules[profile_module];
    it->second = hosts[host].module_id(p.str(mk.name), mk.program_id);
  }
  return it->second;
}

std::vector<HostPartial> extract_partials(const Profile& p, const PartialExtractOptions& options) {
  uint32_t parts = options.parts;
  if (parts & (kPartExecutionOps | kPartSteps)) parts |= kPartExecutions;
  std::vector<HostPartial> hosts(p.hosts.size());
  for (size_t i = 0; i < p.hosts.size(); ++i) {
    HostPartial& h = hosts[i];
    h.parts = parts;
    h.host = p.hosts[i].name;
    h.path = p.hosts[i].path;
    h.base_ns = p.hosts[i].base_ns;
    std::error_code ec;
    uint64_t size = std::filesystem::file_size(h.path, ec);
    h.file_bytes = ec ? 0 : size;
    h.captured_on = p.hosts[i].captured_on;
    h.modules.emplace_back();
  }
  for (const Plane& plane : p.planes) {
    hosts[plane.host].gpu |= plane.kind == PlaneKind::kGpu;
    hosts[plane.host].tpu |= plane.kind == PlaneKind::kTpu;
  }
  if (!hosts.empty()) hosts.front().warnings = p.warnings;
  for (HostPartial& h : hosts) {
    h.steady.known = true;
    h.steady.options = options.steady;
  }
  PartialBuild b(p, hosts);
  b.steady = options.steady;
  if (parts & kPartOps) extract_op_groups(b, options.op_filter);
  if (parts & kPartExecutions) extract_executions(b, parts & kPartExecutionOps);
  // What the steady state set apart: wherever device time is read.
  if (parts & (kPartOps | kPartTimeline | kPartExecutions | kPartCollectives | kPartKernels |
               kPartFlame))
    extract_steady(b);
  if (parts & kPartTimeline) extract_timelines(b);
  if (parts & kPartSteps) extract_steps(b);
  if (parts & kPartCollectives) extract_collectives(b, options.device);
  if (parts & (kPartCompile | kPartCompileTotals)) extract_compile(b, !(parts & kPartCompile));
  if (parts & kPartKernels) extract_kernels(b, options.kernel_filter);
  if (parts & kPartFlame) extract_flame(b, options.flame_bys);
  return hosts;
}

}  // namespace jaxprof
