#include "jaxprof/render/units.h"

#include <fmt/format.h>

#include <cmath>

namespace jaxprof {

std::string ps_to_ns_exact(int64_t ps) {
  bool neg = ps < 0;
  uint64_t a = neg ? static_cast<uint64_t>(-(ps + 1)) + 1 : static_cast<uint64_t>(ps);
  uint64_t whole = a / 1000, frac = a % 1000;
  std::string out = neg ? "-" : "";
  if (frac == 0) return out + fmt::format("{}.0", whole);
  std::string f = fmt::format("{:03d}", frac);
  while (f.size() > 1 && f.back() == '0') f.pop_back();
  return out + fmt::format("{}.{}", whole, f);
}

std::string number(double v) {
  if (!std::isfinite(v)) return "null";
  return fmt::format("{}", v);
}

std::string ps_to_ns(double ps) { return number(ps / 1000.0); }

std::string human_duration(double ps) {
  double a = std::fabs(ps);
  if (a >= 1e12) return fmt::format("{:.3f} s", ps / 1e12);
  if (a >= 1e9) return fmt::format("{:.3f} ms", ps / 1e9);
  if (a >= 1e6) return fmt::format("{:.3f} us", ps / 1e6);
  if (a >= 1e3) return fmt::format("{:.1f} ns", ps / 1e3);
  return fmt::format("{:.0f} ps", ps);
}

std::string human_percent(double fraction) { return fmt::format("{:.1f}%", fraction * 100.0); }

std::string human_bytes(double bytes) {
  static constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (std::fabs(bytes) < 1024) return fmt::format("{:.0f} B", bytes);
  int u = -1;
  while (std::fabs(bytes) >= 1024 && u < 5) {
    bytes /= 1024;
    ++u;
  }
  return fmt::format("{:.2f} {}", bytes, kUnits[u]);
}

}  // namespace jaxprof
