// The folded-stack text format that flamegraph tools read: one line per stack,
// "frame;frame;frame weight", weights in integer picoseconds.
#pragma once

#include <string>
#include <string_view>

#include "jaxprof/analysis/flame/flame.h"

namespace jaxprof {

// A frame name made safe for one folded field: ';' (the separator) becomes ':', and control
// characters (a newline would end the record) become spaces.
std::string folded_frame(std::string_view name);

// One line per node with self weight, in tree order (children by weight); the device is the
// first frame. Lines sum to the root's total.
std::string render_flame_folded(const FlameTree& tree);

}  // namespace jaxprof
