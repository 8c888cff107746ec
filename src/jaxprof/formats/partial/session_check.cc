#include "jaxprof/formats/partial/session_check.h"

#include <fmt/format.h>

#include <filesystem>
#include <map>

#include "jaxprof/common/error.h"

namespace jaxprof {

namespace {

// Nanoseconds since the epoch after 2001: a wall clock, not a session-relative one.
constexpr int64_t kWallClockNs = int64_t{1000000000} * 1000000000;

}  // namespace

std::vector<CaptureFacts> capture_facts(const Profile& p) {
  std::vector<CaptureFacts> out(p.hosts.size());
  for (size_t h = 0; h < p.hosts.size(); ++h) {
    out[h].file = std::filesystem::path(p.hosts[h].path).filename().string();
    out[h].captured_on = p.hosts[h].captured_on;
    out[h].start_ns = p.hosts[h].base_ns;
  }
  for (const Plane& plane : p.planes) {
    out[plane.host].gpu |= plane.kind == PlaneKind::kGpu;
    out[plane.host].tpu |= plane.kind == PlaneKind::kTpu;
  }
  return out;
}

std::vector<std::string> reasons_not_one_session(const std::vector<CaptureFacts>& files) {
  std::vector<std::string> reasons;
  if (files.size() < 2) return reasons;

  std::map<std::string, std::vector<std::string>> files_of_machine;
  for (const CaptureFacts& f : files)
    for (const std::string& machine : f.captured_on) files_of_machine[machine].push_back(f.file);
  for (const auto& [machine, names] : files_of_machine) {
    if (names.size() < 2) continue;
    std::string list;
    for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
    reasons.push_back(
        fmt::format("{} were all captured on machine {} (one machine writes one file per capture)",
                    list, machine));
  }

  const CaptureFacts *gpu = nullptr, *tpu = nullptr;
  for (const CaptureFacts& f : files) {
    if (f.gpu && !f.tpu && !gpu) gpu = &f;
    if (f.tpu && !f.gpu && !tpu) tpu = &f;
  }
  if (gpu && tpu) reasons.push_back(fmt::format("{} holds GPUs and {} TPUs", gpu->file, tpu->file));

  const CaptureFacts *first = nullptr, *last = nullptr;
  for (const CaptureFacts& f : files) {
    if (f.start_ns < kWallClockNs) continue;
    if (!first || f.start_ns < first->start_ns) first = &f;
    if (!last || f.start_ns > last->start_ns) last = &f;
  }
  if (first && last && last->start_ns - first->start_ns > kMaxSessionStartSpreadNs)
    reasons.push_back(fmt::format("{} began {:.0f} min after {}", last->file,
                                  static_cast<double>(last->start_ns - first->start_ns) / 60e9,
                                  first->file));
  return reasons;
}

CaptureFacts capture_facts(const HostPartial& h) {
  CaptureFacts f;
  f.file = std::filesystem::path(h.path).filename().string();
  f.captured_on = h.captured_on;
  f.gpu = h.gpu;
  f.tpu = h.tpu;
  f.start_ns = h.base_ns;
  return f;
}

void check_one_capture(const ProfileFiles& files, const std::vector<CaptureFacts>& facts,
                       std::vector<std::string>& warnings) {
  std::vector<std::string> reasons = reasons_not_one_session(facts);
  if (reasons.empty()) return;
  std::string joined;
  for (const std::string& r : reasons) joined += (joined.empty() ? "" : "; ") + r;
  if (files.layout == ProfileLayout::kFile || files.hosts.empty()) {
    warnings.push_back("the files named may not be hosts of one capture: " + joined);
    return;
  }
  std::string found;
  for (const HostFile& h : files.hosts)
    found += (found.empty() ? "" : ", ") + std::filesystem::path(h.path).filename().string();
  std::string dir = files.session_dir.empty() ? files.path : files.session_dir;
  throw InputError(
      dir, fmt::format("holds {} profiles that are not the hosts of one capture ({}); found: {}. "
                       "Read one of them (jaxprof {}), or name the files of one capture as "
                       "several paths",
                       files.hosts.size(), joined, found,
                       (std::filesystem::path(dir) /
                        std::filesystem::path(files.hosts.front().path).filename())
                           .string()));
}

}  // namespace jaxprof
