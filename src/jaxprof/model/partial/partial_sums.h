// Bounds on the sums the analyses form over a set of hosts. A partial file's limits keep one
// host's figures and sums within int64 picoseconds, but the figures of very many hosts summed
// (device time of every device, an op's time on every host) could pass 2^63: the set keeps, per
// kind of figure, the sum of the magnitudes of every host's figures with checked arithmetic, so
// that every sum an analysis forms of them (a part of that total) fits, and a set whose total
// would not fit is refused naming the file of the host that passes it. A device's timeline
// figures (span, busy, idle, ...) are each summed over the devices on their own, never with each
// other, so each has a total of its own.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace jaxprof {

struct HostPartial;

class PartialSums {
 public:
  // Adds the host's figures. Throws InputError naming its file (and the kind of figure) where a
  // total would overflow; then nothing of the host is added.
  void add(const HostPartial& host);

  enum Kind {
    kOpTime,         // op group durations and self times
    kDeviceTime,     // busy, span and the timeline's figures
    kExecutionTime,  // module executions and their ops
    kCollectiveTime,
    kKernelTime,
    kFlameTime,
    kCompileTime,
    kStepTime,
    kSetApartTime,
    kKinds
  };

 private:
  static constexpr size_t kDeviceFigures = 13;  // a device's op busy and span, its timeline's
  std::array<int64_t, kKinds> totals_{};
  std::array<int64_t, kDeviceFigures> device_{};  // kDeviceTime, per figure
  unsigned __int128 op_sum_sq_ = 0;               // the moments' sums of squares
  uint64_t counts_ = 0;                           // op events and group counts
};

}  // namespace jaxprof
