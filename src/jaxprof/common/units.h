// Number formatting shared by renderers. Times stay integer picoseconds until here.
//
// One rule for every number a person reads (tables, sentences, HTML; docs/cli.md "Numbers"):
// - unknown is "—" (null in JSON, empty in CSV), zero is "0" (no unit), never a guess;
// - a lone value reads in the largest unit in which it is at least 1 ("6.7 MiB", "1.080 s");
// - a table column reads in one unit for all its cells, chosen from its values (column_scale),
//   named in the header ("total (ms)"), so that the cells of a column compare by eye;
// - sizes are binary (KiB, MiB, ...), bandwidths decimal (MB/s, GB/s), never an exponent.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace jaxprof {

// Exact nanoseconds from picoseconds, as a JSON/CSV number: 1950960000 -> "1950960.0",
// 1234567 -> "1234.567".
std::string ps_to_ns_exact(int64_t ps);
// A double number of picoseconds as nanoseconds, shortest round-trip form.
std::string ps_to_ns(double ps);
// Shortest round-trip form of a double ("0.25", "1e-07"); "null" when not finite.
std::string number(double v);
// `v` as an integer when it is a whole number an int64_t holds (counters written as integers).
std::optional<int64_t> whole_number(double v);

// What an unknown value prints as in tables and HTML.
inline constexpr std::string_view kUnknownText = "\xe2\x80\x94";  // —

// What a number measures: it decides the family of units and the decimals.
enum class Measure {
  kText,       // not a number: left-aligned text
  kLabel,      // short text aligned right (grid "2x1x1", "8*")
  kCount,      // integers: "1234"
  kDuration,   // picoseconds in; ns, us, ms, s out
  kBytes,      // bytes in; B, KiB, MiB, GiB, TiB out
  kBandwidth,  // GB/s in (1e9 bytes/s); B/s, KB/s, MB/s, GB/s, TB/s out
  kShare,      // a fraction in; "12.3%" out
  kPercent,    // already in percent (occupancy): "37.5%" out
  kNumber,     // a plain quantity (ratios, coefficients): four significant digits, no exponent
  kFlops,      // floating-point operations; k, M, G, T, P (10^3 steps)
  kFlopRate,   // FLOP/s in; MFLOP/s, GFLOP/s, TFLOP/s, PFLOP/s out
};

// A unit of one measure: value / divisor, printed with `decimals` digits after the point.
struct UnitScale {
  Measure measure = Measure::kNumber;
  std::string_view unit;  // "ms", "MiB", "GB/s"; "" for counts, shares and plain numbers
  double divisor = 1;
  int decimals = 0;
};

// The unit a lone value reads in: the largest in which it is at least 1.
UnitScale scale_for(Measure m, double value);
// One unit for a column of values (unknown and zero values ignored): the largest in which the
// largest value is at least 1; a smaller one when smaller values of the column would otherwise
// print as zero, as long as the largest keeps at most six digits before the point.
UnitScale column_scale(Measure m, std::span<const double> values);
// `value` in `scale`: "—" when unknown (or not finite), "0" when zero, "<0.001" when too small
// to show in this unit; with `with_unit` the unit follows ("1.080 s").
std::string format_in(std::optional<double> value, const UnitScale& scale, bool with_unit);
// A lone value in its own unit: format_in(v, scale_for(m, v), true).
std::string format_value(Measure m, std::optional<double> value);

// Lone values, the names every renderer knows: "1.950 ms", "812.0 ns", "0", "—".
std::string human_duration(double ps);
std::string human_percent(double fraction);  // "12.3%", "0"
std::string human_bytes(double bytes);       // "6.7 MiB"; pass std::nullopt-like NaN for unknown
std::string human_bandwidth(double gbps);    // "12.35 GB/s", "2.26 B/s"

}  // namespace jaxprof
