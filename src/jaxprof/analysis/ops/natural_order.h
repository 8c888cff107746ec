// Names in the order people count: "/device:GPU:2" before "/device:GPU:10", as every listing of
// devices shows them (profiles store planes in whatever order the runtime registered them).
#pragma once

#include <string_view>

namespace jaxprof {

// True when `a` comes before `b`: runs of digits compare as numbers, the rest byte by byte.
bool natural_less(std::string_view a, std::string_view b);

}  // namespace jaxprof
