// The flame tree in speedscope's file format (https://www.speedscope.app/file-format-schema.json):
// one "sampled" profile per device, one sample per stack, weighted in nanoseconds.
#pragma once

#include <string>

#include "jaxprof/analysis/flame/flame.h"

namespace jaxprof {

std::string render_flame_speedscope(const FlameTree& tree);

}  // namespace jaxprof
