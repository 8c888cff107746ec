// The flame tree for terminals and scripts: the heaviest stacks as a table (or CSV rows), or the
// whole tree as JSON.
#pragma once

#include <cstddef>
#include <string>

#include "jaxprof/analysis/flame/flame.h"
#include "jaxprof/render/text/text.h"

namespace jaxprof {

const char* frame_kind_name(FrameKind kind);

// `top` limits the table and CSV to the N heaviest stacks per device (0 = all); JSON is the
// whole tree.
std::string render_flame(const FlameTree& tree, OutputFormat format, size_t top);

}  // namespace jaxprof
