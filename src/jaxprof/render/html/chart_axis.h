// Axes for the report's charts: where the ticks go and what they read. A linear axis has round
// ticks (1, 2, 2.5 or 5 times a power of ten) in one unit, chosen from the axis' largest value
// and named once in the axis title ("step time (ms)"), so that ticks read "0, 0.5, 1, 1.5" and
// never "810.245 ms". A log axis has ticks at powers of its base, each with its own unit
// ("1 KiB", "64 KiB", "1 MiB"): one unit cannot span six orders of magnitude.
#pragma once

#include <string>
#include <vector>

namespace jaxprof {

// What an axis measures; it decides the units.
enum class AxisQuantity {
  kDuration,   // picoseconds; ps, ns, us, ms, s
  kBytes,      // bytes; B, KiB, MiB, GiB, TiB (binary)
  kBandwidth,  // GB/s (1e9 bytes/s); B/s, KB/s, MB/s, GB/s, TB/s (decimal)
  kCount,      // plain numbers
};

struct AxisTick {
  double value = 0;  // in the quantity's base unit (ps, bytes, GB/s)
  std::string label;
};

struct Axis {
  bool log = false;
  double lo = 0, hi = 1;  // drawn range, base unit (both > 0 on a log axis)
  std::string unit;       // the unit of every tick label of a linear axis ("ms"); "" on a log axis
  std::vector<AxisTick> ticks;

  // Where `v` falls on [0, 1] along the axis (outside when v is out of range).
  double fraction(double v) const;
};

// Round ticks covering [lo, hi] (hi > lo, else a range around them is made up); about `ticks`
// intervals. The axis' range is widened to the outermost ticks.
Axis linear_axis(double lo, double hi, AxisQuantity q, int ticks = 5);
// Ticks at powers of `base` (2 for sizes, 10 otherwise) covering [lo, hi], both > 0, with at
// most about `ticks` labels (every k-th power). The range is widened by a margin on both sides so
// that points at the ends are not drawn on the frame.
Axis log_axis(double lo, double hi, AxisQuantity q, int ticks = 8);

// A lone value in its quantity's unit, for tooltips and labels: "71.5 ms", "12 KiB", "3.2 GB/s".
std::string axis_value_text(double v, AxisQuantity q);

}  // namespace jaxprof
