// A ratio NEW / BASE and its interval as changes in percent, one way for every renderer of diff
// and check: "+3.2%", "+1.0% to +5.5%", "+∞" for an unbounded upper end.
#pragma once

#include <optional>
#include <string>

namespace jaxprof {

std::string change_percent(double ratio);                        // "+3.2%", "-100.0%", "+∞"
std::string change_percent(const std::optional<double>& ratio);  // "" when absent
std::string change_interval(double low, double high);            // "+1.0% to +5.5%"

}  // namespace jaxprof
