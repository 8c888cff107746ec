#include "jaxprof/model/share_guard.h"

#include <fmt/format.h>

namespace jaxprof {

double ShareGuard::operator()(double part, double whole, std::string_view what) {
  if (!(whole > 0)) return 0;
  const double share = part / whole;
  if (share <= 1.0) return share;
  ++count_;
  if (share > worst_) {
    worst_ = share;
    worst_what_ = std::string(what);
  }
  return 1.0;
}

void ShareGuard::merge(const ShareGuard& other) {
  count_ += other.count_;
  if (other.worst_ > worst_) {
    worst_ = other.worst_;
    worst_what_ = other.worst_what_;
  }
}

std::string ShareGuard::warning(std::string_view base) const {
  if (count_ == 0) return {};
  return fmt::format(
      "{} share{} above 100% shown as 100% (the largest: {}, {:.1f}% of {}): events counted more "
      "than once (overlapping lines of one device, or several devices' work read as one)",
      count_, count_ == 1 ? "" : "s", worst_what_, worst_ * 100, base);
}

}  // namespace jaxprof
