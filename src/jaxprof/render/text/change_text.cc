#include "jaxprof/render/text/change_text.h"

#include <fmt/format.h>

#include <cmath>

namespace jaxprof {

std::string change_percent(double ratio) {
  if (std::isinf(ratio)) return "+∞";
  if (std::isnan(ratio)) return "—";
  double percent = (ratio - 1) * 100;
  if (std::fabs(percent) < 0.05) percent = 0;  // no "-0.0%"
  return fmt::format("{:+.1f}%", percent);
}

std::string change_percent(const std::optional<double>& ratio) {
  return ratio ? change_percent(*ratio) : std::string();
}

std::string change_interval(double low, double high) {
  return change_percent(low) + " to " + change_percent(high);
}

}  // namespace jaxprof
