#include "jaxprof/render/perfetto/clock_shift_sink.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>

#include "jaxprof/common/units.h"

namespace jaxprof {

void ClockShiftSink::process(int pid, std::string_view name, std::string_view host) {
  auto it = clocks_.find(std::string(host));
  seen_[std::string(host)] = it != clocks_.end();
  if (it != clocks_.end()) by_pid_[pid] = it->second.offset_ps;
  inner_.process(pid, name, host);
}

void ClockShiftSink::end(const std::vector<std::string>& notes) {
  std::vector<std::string> all = notes;
  std::string unaligned;
  size_t missing = 0;
  for (const auto& [host, aligned] : seen_)
    if (!aligned) unaligned += (missing++ ? ", " : "") + host;
  if (missing)
    all.push_back(
        fmt::format("{} host{} kept {} recorded clock{} (no collective shared with the "
                    "others to estimate an offset): {}",
                    missing, missing == 1 ? "" : "s", missing == 1 ? "its" : "their",
                    missing == 1 ? "" : "s", unaligned));
  inner_.end(all);
}

std::string clock_alignment_note(const std::map<std::string, HostClock>& clocks) {
  // The hosts furthest off first, a few of them: a thousand offsets do not make a note.
  std::vector<std::pair<std::string, HostClock>> v(clocks.begin(), clocks.end());
  std::stable_sort(v.begin(), v.end(), [](const auto& a, const auto& b) {
    return std::abs(a.second.offset_ps) > std::abs(b.second.offset_ps);
  });
  int64_t worst_error = 0;
  for (const auto& [host, c] : v) worst_error = std::max(worst_error, c.error_ps);
  std::string listed;
  const size_t shown = std::min<size_t>(v.size(), 8);
  for (size_t i = 0; i < shown; ++i)
    listed +=
        fmt::format("{}{} {}{}", i ? ", " : "", v[i].first, v[i].second.offset_ps > 0 ? "-" : "+",
                    human_duration(static_cast<double>(std::abs(v[i].second.offset_ps))));
  if (v.size() > shown) listed += fmt::format(", ... ({} more)", v.size() - shown);
  return fmt::format(
      "{} hosts put on one clock (the median host's) by the offsets `jaxprof hosts` estimates "
      "from when collectives end, each within {} at most; times moved by: {} (--no-align keeps "
      "the recorded clocks)",
      v.size(), human_duration(static_cast<double>(worst_error)), listed);
}

}  // namespace jaxprof
