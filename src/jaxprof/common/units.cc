#include "jaxprof/common/units.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
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

std::optional<int64_t> whole_number(double v) {
  // 2^63 is the first double past int64_t's range.
  if (!std::isfinite(v) || std::trunc(v) != v || v < -0x1p63 || v >= 0x1p63) return std::nullopt;
  return static_cast<int64_t>(v);
}

std::string number(double v) {
  if (!std::isfinite(v)) return "null";
  return fmt::format("{}", v);
}

std::string ps_to_ns(double ps) { return number(ps / 1000.0); }

namespace {

// The units of a measure, smallest first.
std::span<const UnitScale> units_of(Measure m) {
  static constexpr std::array<UnitScale, 5> kDuration = {{
      {Measure::kDuration, "ps", 1, 0},
      {Measure::kDuration, "ns", 1e3, 1},
      {Measure::kDuration, "us", 1e6, 3},
      {Measure::kDuration, "ms", 1e9, 3},
      {Measure::kDuration, "s", 1e12, 3},
  }};
  static constexpr std::array<UnitScale, 5> kBytes = {{
      {Measure::kBytes, "B", 1, 0},
      {Measure::kBytes, "KiB", 1024.0, 1},
      {Measure::kBytes, "MiB", 1024.0 * 1024, 1},
      {Measure::kBytes, "GiB", 1024.0 * 1024 * 1024, 2},
      {Measure::kBytes, "TiB", 1024.0 * 1024 * 1024 * 1024, 2},
  }};
  static constexpr std::array<UnitScale, 5> kBandwidth = {{
      {Measure::kBandwidth, "B/s", 1e-9, 2},
      {Measure::kBandwidth, "KB/s", 1e-6, 2},
      {Measure::kBandwidth, "MB/s", 1e-3, 2},
      {Measure::kBandwidth, "GB/s", 1, 2},
      {Measure::kBandwidth, "TB/s", 1e3, 2},
  }};
  static constexpr std::array<UnitScale, 6> kFlops = {{
      {Measure::kFlops, "", 1, 0},
      {Measure::kFlops, "k", 1e3, 2},
      {Measure::kFlops, "M", 1e6, 2},
      {Measure::kFlops, "G", 1e9, 2},
      {Measure::kFlops, "T", 1e12, 2},
      {Measure::kFlops, "P", 1e15, 2},
  }};
  static constexpr std::array<UnitScale, 5> kFlopRate = {{
      {Measure::kFlopRate, "FLOP/s", 1, 0},
      {Measure::kFlopRate, "MFLOP/s", 1e6, 2},
      {Measure::kFlopRate, "GFLOP/s", 1e9, 2},
      {Measure::kFlopRate, "TFLOP/s", 1e12, 2},
      {Measure::kFlopRate, "PFLOP/s", 1e15, 2},
  }};
  switch (m) {
    case Measure::kFlops:
      return kFlops;
    case Measure::kFlopRate:
      return kFlopRate;
    case Measure::kDuration:
      return kDuration;
    case Measure::kBytes:
      return kBytes;
    case Measure::kBandwidth:
      return kBandwidth;
    default:
      return {};
  }
}

UnitScale unitless(Measure m) {
  switch (m) {
    case Measure::kShare:
      return {m, "", 0.01, 1};  // a fraction shown in percent
    case Measure::kPercent:
      return {m, "", 1, 1};
    case Measure::kNumber:
      return {m, "", 1, -1};  // significant digits, see format_in
    default:
      return {m, "", 1, 0};
  }
}

// The largest unit in which |v| is at least 1 (the smallest unit for smaller values).
size_t unit_index(std::span<const UnitScale> units, double v) {
  size_t i = 0;
  while (i + 1 < units.size() && std::fabs(v) >= units[i + 1].divisor) ++i;
  return i;
}

bool known(double v) { return std::isfinite(v); }

// Whether a nonzero `v` prints as zero in `s`.
bool rounds_to_zero(double v, const UnitScale& s) {
  return v != 0 && std::fabs(v / s.divisor) < 0.5 * std::pow(10.0, -s.decimals);
}

}  // namespace

UnitScale scale_for(Measure m, double value) {
  std::span<const UnitScale> units = units_of(m);
  if (units.empty()) return unitless(m);
  return units[known(value) ? unit_index(units, value) : 0];
}

UnitScale column_scale(Measure m, std::span<const double> values) {
  std::span<const UnitScale> units = units_of(m);
  if (units.empty()) return unitless(m);
  double largest = 0, smallest = 0;  // |value|; smallest nonzero
  for (double v : values) {
    if (!known(v) || v == 0) continue;
    double a = std::fabs(v);
    largest = std::max(largest, a);
    smallest = smallest == 0 ? a : std::min(smallest, a);
  }
  if (largest == 0) return units[0].measure == Measure::kBandwidth ? units[3] : units[1];
  size_t i = unit_index(units, largest);
  // Step down while the column's smallest value would read as zero and the largest still fits.
  while (i > 0 && rounds_to_zero(smallest, units[i]) && largest / units[i - 1].divisor < 1e6) --i;
  return units[i];
}

std::string format_in(std::optional<double> value, const UnitScale& s, bool with_unit) {
  if (!value || !known(*value)) return std::string(kUnknownText);
  double v = *value;
  if (v == 0) return "0";
  std::string text;
  if (s.measure == Measure::kCount || s.measure == Measure::kLabel) {
    text = fmt::format("{:.0f}", v);
  } else if (s.decimals < 0) {
    // Plain numbers: four significant digits, fixed notation (no exponent), trailing zeros kept
    // off; below 0.0001 the value is too small to show.
    double a = std::fabs(v);
    int digits = a >= 1 ? static_cast<int>(std::floor(std::log10(a))) + 1 : 0;
    int decimals = std::clamp(4 - digits, 0, 4);
    if (a < 0.5e-4) return v < 0 ? "-<0.0001" : "<0.0001";
    text = fmt::format("{:.{}f}", v, decimals);
    if (text.find('.') != std::string::npos) {
      while (text.back() == '0') text.pop_back();
      if (text.back() == '.') text.pop_back();
    }
  } else if (rounds_to_zero(v, s)) {
    text = fmt::format("{}<{:.{}f}", v < 0 ? "-" : "", std::pow(10.0, -s.decimals), s.decimals);
  } else {
    text = fmt::format("{:.{}f}", v / s.divisor, s.decimals);
  }
  if (s.measure == Measure::kShare || s.measure == Measure::kPercent) return text + "%";
  if (with_unit && !s.unit.empty()) return text + " " + std::string(s.unit);
  return text;
}

std::string format_value(Measure m, std::optional<double> value) {
  return format_in(value, scale_for(m, value.value_or(0)), true);
}

std::string human_duration(double ps) { return format_value(Measure::kDuration, ps); }
std::string human_percent(double fraction) { return format_value(Measure::kShare, fraction); }
std::string human_bytes(double bytes) { return format_value(Measure::kBytes, bytes); }
std::string human_bandwidth(double gbps) { return format_value(Measure::kBandwidth, gbps); }

}  // namespace jaxprof
