#include "jaxprof/render/html/chart_axis.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "jaxprof/common/units.h"

namespace jaxprof {
namespace {

// The units are the tables' (units.h): an axis in "ms" or "MiB" means what a column does.
Measure measure_of(AxisQuantity q) {
  switch (q) {
    case AxisQuantity::kDuration:
      return Measure::kDuration;
    case AxisQuantity::kBytes:
      return Measure::kBytes;
    case AxisQuantity::kBandwidth:
      return Measure::kBandwidth;
    case AxisQuantity::kCount:
      break;
  }
  return Measure::kCount;
}

// The largest unit in which |v| is at least 1 (the smallest when none is).
UnitScale unit_for(AxisQuantity q, double v) { return scale_for(measure_of(q), v); }

// Decimals that print every multiple of `step` exactly (step a round number: 2.5, 0.2, 50).
int decimals_for(double step) {
  for (int d = 0; d < 9; ++d) {
    double scaled = step * std::pow(10.0, d);
    if (std::fabs(scaled - std::round(scaled)) < 1e-6 * std::max(1.0, scaled)) return d;
  }
  return 9;
}

// Up to three significant digits, trailing zeros dropped: 71.5, 12, 2.04, 0.5.
std::string short_number(double x) {
  if (x == 0) return "0";
  double a = std::fabs(x);
  int d = a >= 100 ? 0 : a >= 10 ? 1 : a >= 1 ? 2 : 3;
  std::string s = fmt::format("{:.{}f}", x, d);
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  return s;
}

}  // namespace

double Axis::fraction(double v) const {
  if (log) {
    if (v <= 0) return -1;
    return (std::log(v) - std::log(lo)) / (std::log(hi) - std::log(lo));
  }
  return (v - lo) / (hi - lo);
}

Axis linear_axis(double lo, double hi, AxisQuantity q, int ticks) {
  if (!std::isfinite(lo) || !std::isfinite(hi)) lo = 0, hi = 1;
  if (!(hi > lo)) {
    const double pad = hi != 0 ? std::fabs(hi) * 0.25 : unit_for(q, 1).divisor;
    hi += pad;
    lo = lo >= 0 ? std::max(0.0, lo - pad) : lo - pad;
  }
  const UnitScale u = unit_for(q, std::max(std::fabs(lo), std::fabs(hi)));
  const double a = lo / u.divisor, b = hi / u.divisor;
  const double raw = (b - a) / std::max(1, ticks);
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  const double r = raw / mag;
  const double step = (r <= 1 ? 1 : r <= 2 ? 2 : r <= 2.5 ? 2.5 : r <= 5 ? 5 : 10) * mag;
  const int decimals = decimals_for(step);
  const long first = static_cast<long>(std::floor(a / step + 1e-9));
  const long last = static_cast<long>(std::ceil(b / step - 1e-9));
  Axis axis;
  axis.unit = std::string(u.unit);
  axis.lo = static_cast<double>(first) * step * u.divisor;
  axis.hi = static_cast<double>(last) * step * u.divisor;
  for (long k = first; k <= last; ++k) {
    double v = static_cast<double>(k) * step;
    axis.ticks.push_back(
        {v * u.divisor, k == 0 ? std::string("0") : fmt::format("{:.{}f}", v, decimals)});
  }
  return axis;
}

Axis log_axis(double lo, double hi, AxisQuantity q, int ticks) {
  const double base = q == AxisQuantity::kBytes ? 2 : 10;
  if (!(lo > 0) || !std::isfinite(lo)) lo = 1;
  if (!(hi >= lo) || !std::isfinite(hi)) hi = lo;
  auto exponent = [&](double v) { return std::log(v) / std::log(base); };
  double e0 = exponent(lo), e1 = exponent(hi);
  // A margin of a fraction of the span (at least half a power) keeps the end points off the frame.
  const double pad = std::max(0.5, 0.06 * (e1 - e0));
  e0 -= pad;
  e1 += pad;
  const long first = static_cast<long>(std::ceil(e0)), last = static_cast<long>(std::floor(e1));
  // Label every k-th power, k a round number (powers of 1024 are the byte units).
  const std::vector<long> strides =
      base == 2 ? std::vector<long>{1, 2, 5, 10, 20} : std::vector<long>{1, 2, 3, 5, 10};
  long stride = strides.back();
  for (long s : strides)
    if ((last - first) / s + 1 <= ticks) {
      stride = s;
      break;
    }
  Axis axis;
  axis.log = true;
  axis.lo = std::pow(base, e0);
  axis.hi = std::pow(base, e1);
  for (long e = first; e <= last; ++e) {
    if (((e % stride) + stride) % stride != 0) continue;
    double v = std::pow(base, static_cast<double>(e));
    axis.ticks.push_back({v, axis_value_text(v, q)});
  }
  return axis;
}

std::string axis_value_text(double v, AxisQuantity q) {
  if (v == 0) return "0";
  const UnitScale u = unit_for(q, v);
  std::string s = short_number(v / u.divisor);
  return u.unit.empty() ? s : s + " " + std::string(u.unit);
}

}  // namespace jaxprof
