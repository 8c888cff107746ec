// HLO collectives by opcode, in one place for every reader of HLO.
#pragma once

#include <string_view>

namespace jaxprof {

// "all-reduce" for all-reduce, all-reduce-start, all-reduce-done; "" if not a collective.
std::string_view collective_base_opcode(std::string_view opcode);

}  // namespace jaxprof
