#include "jaxprof/formats/session_check.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>

namespace jaxprof {

namespace {

std::string file_name(const Host& h) { return std::filesystem::path(h.path).filename().string(); }

// Device kinds of each host's planes: 1 = GPU, 2 = TPU.
std::vector<int> device_kinds(const Profile& p) {
  std::vector<int> kinds(p.hosts.size(), 0);
  for (const Plane& plane : p.planes) {
    if (plane.kind == PlaneKind::kGpu) kinds[plane.host] |= 1;
    if (plane.kind == PlaneKind::kTpu) kinds[plane.host] |= 2;
  }
  return kinds;
}

// Nanoseconds since the epoch after 2001: a wall clock, not a session-relative one.
constexpr int64_t kWallClockNs = int64_t{1000000000} * 1000000000;

}  // namespace

std::vector<std::string> reasons_not_one_session(const Profile& p) {
  std::vector<std::string> reasons;
  if (p.hosts.size() < 2) return reasons;

  std::map<std::string, std::vector<std::string>> files_of_machine;
  for (const Host& h : p.hosts)
    for (const std::string& machine : h.captured_on)
      files_of_machine[machine].push_back(file_name(h));
  for (const auto& [machine, files] : files_of_machine) {
    if (files.size() < 2) continue;
    std::string list;
    for (const std::string& f : files) list += (list.empty() ? "" : ", ") + f;
    reasons.push_back(
        fmt::format("{} were all captured on machine {} (one machine writes one "
                    "file per capture)",
                    list, machine));
  }

  std::vector<int> kinds = device_kinds(p);
  std::string gpu, tpu;
  for (size_t h = 0; h < p.hosts.size(); ++h) {
    if (kinds[h] == 1 && gpu.empty()) gpu = file_name(p.hosts[h]);
    if (kinds[h] == 2 && tpu.empty()) tpu = file_name(p.hosts[h]);
  }
  if (!gpu.empty() && !tpu.empty())
    reasons.push_back(fmt::format("{} holds GPUs and {} TPUs", gpu, tpu));

  const Host *first = nullptr, *last = nullptr;
  for (const Host& h : p.hosts) {
    if (h.base_ns < kWallClockNs) continue;
    if (!first || h.base_ns < first->base_ns) first = &h;
    if (!last || h.base_ns > last->base_ns) last = &h;
  }
  if (first && last && last->base_ns - first->base_ns > kMaxSessionStartSpreadNs)
    reasons.push_back(fmt::format("{} began {:.0f} min after {}", file_name(*last),
                                  static_cast<double>(last->base_ns - first->base_ns) / 60e9,
                                  file_name(*first)));
  return reasons;
}

}  // namespace jaxprof
