// What a flamegraph frame stands for (analysis/flame); partial summaries store it per frame.
#pragma once

#include <cstdint>

namespace jaxprof {

enum class FrameKind : uint8_t { kRoot, kDevice, kSource, kOpPath, kModule, kOp, kIdle };

}  // namespace jaxprof
