// The range of times the model holds, and checked conversions into it from values read from files.
//
// Event starts are picoseconds from the profile's time zero, durations picoseconds; both stay
// within kMaxTimePs (2^61 ps, about 26.7 days) in magnitude, so that what analyses compute from
// two or three of them (an end, a gap, a span, a sum of a few) cannot overflow int64. Importers
// convert file values with the checked helpers below and refuse a value outside the range as bad
// input: a damaged or hostile file can hold any number, and a wrapped one is a silent wrong answer.
#pragma once

#include <cstdint>

namespace jaxprof {

inline constexpr int64_t kMaxTimePs = int64_t{1} << 61;
// kMaxTimePs in words, for messages.
inline constexpr const char* kMaxTimeText = "26 days";

inline bool time_in_range(int64_t ps) { return ps >= -kMaxTimePs && ps <= kMaxTimePs; }
inline bool duration_in_range(int64_t ps) { return ps >= 0 && ps <= kMaxTimePs; }

// a + b, a - b and a * b, false where the result does not fit int64.
inline bool checked_add(int64_t a, int64_t b, int64_t& out) {
  return !__builtin_add_overflow(a, b, &out);
}
inline bool checked_sub(int64_t a, int64_t b, int64_t& out) {
  return !__builtin_sub_overflow(a, b, &out);
}
inline bool checked_mul(int64_t a, int64_t b, int64_t& out) {
  return !__builtin_mul_overflow(a, b, &out);
}

// Nanoseconds (a difference of file timestamps) as picoseconds within the model's range.
inline bool ns_to_ps(int64_t ns, int64_t& ps) {
  return checked_mul(ns, 1000, ps) && time_in_range(ps);
}

// The time `ns` after `base_ns` in picoseconds, within the model's range; false where the
// difference or the product overflows or falls outside it.
inline bool ps_since(int64_t ns, int64_t base_ns, int64_t& ps) {
  int64_t diff;
  return checked_sub(ns, base_ns, diff) && ns_to_ps(diff, ps);
}

// A double as int64, truncated toward zero; false for NaN, infinities and values int64 cannot
// hold (where the plain cast is undefined behaviour).
inline bool double_to_int64(double d, int64_t& out) {
  // -2^63 is exact as a double; 2^63 is the first value above INT64_MAX.
  if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0)) return false;
  out = static_cast<int64_t>(d);
  return true;
}

}  // namespace jaxprof
