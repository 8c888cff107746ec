// Number formatting shared by renderers. Times stay integer picoseconds until here.
#pragma once

#include <cstdint>
#include <string>

namespace jaxprof {

// Exact nanoseconds from picoseconds, as a JSON/CSV number: 1950960000 -> "1950960.0",
// 1234567 -> "1234.567".
std::string ps_to_ns_exact(int64_t ps);
// A double number of picoseconds as nanoseconds, shortest round-trip form.
std::string ps_to_ns(double ps);
// Human-readable duration for tables: "1.95 ms", "812 ns", "3.20 s".
std::string human_duration(double ps);
std::string human_percent(double fraction);
// Binary-prefixed byte size for tables and charts: "812 B", "1.50 KiB", "144.00 GiB".
std::string human_bytes(double bytes);
// Shortest round-trip form of a double ("0.25", "1e-07").
std::string number(double v);

}  // namespace jaxprof
