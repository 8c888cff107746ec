// Shares are parts of a whole: never above 1. A part can exceed its whole only where events are
// counted more than once (a device's lines overlapping, several GPUs' work read as one device) or
// where a part and a whole come from different bases; no such figure is printed. The guard
// clips the share to 1 and keeps the count and the worst case, for one warning per analysis.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace jaxprof {

class ShareGuard {
 public:
  // part / whole (0 when whole is not positive), at most 1; `what` names the share for the
  // warning ("fusion.1 on /device:GPU:0").
  double operator()(double part, double whole, std::string_view what);
  // Adds another guard's clips (one warning for an analysis that guards per device).
  void merge(const ShareGuard& other);
  bool clipped() const { return count_ > 0; }
  // "2 shares above 100% shown as 100% (the largest: fusion.1 on /device:GPU:0, 200.0% of
  // BASE): ...why...". Empty when nothing was clipped.
  std::string warning(std::string_view base) const;

 private:
  uint64_t count_ = 0;
  double worst_ = 0;
  std::string worst_what_;
};

}  // namespace jaxprof
