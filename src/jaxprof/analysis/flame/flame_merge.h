// One flame tree for all devices: the frames below the device frames are merged by stack, so a
// program that runs on eight devices is drawn once, eight times as wide, and every op keeps the
// sum of its time on all of them. For pages where a frame per device would leave each device an
// eighth of the width (the report); `jaxprof flame` keeps the devices apart.
#pragma once

#include <string>

#include "jaxprof/analysis/flame/flame.h"

namespace jaxprof {

// The root is named `root_name`; the merged frames are its children, one level higher than in
// `tree`. `devices` and `warnings` are copied, each device's `node` set to the root (which now
// holds all of them). Weights stay exact: each frame weighs the sum of the frames merged into it.
FlameTree merge_flame_devices(const FlameTree& tree, std::string root_name);

}  // namespace jaxprof
