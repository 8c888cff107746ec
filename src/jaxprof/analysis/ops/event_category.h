// The category of one device op event, the same way for every analysis: what the profile says
// about the event itself first (a copy or fill by its stats or its stream, memory_op.h), then its
// HLO instruction (looked up in its own program only), else its name (category.h).
#pragma once

#include <cstdint>

#include "jaxprof/analysis/ops/category.h"
#include "jaxprof/model/profile.h"

namespace jaxprof {

// The HLO instruction an op event ran, when the index knows its module; null otherwise.
const HloInstruction* event_instruction(const Profile& p, uint32_t e);

// The category from the event's HLO instruction or name alone (no per-event stats): the same for
// every event with the same metadata, hlo op and module, so callers may cache it on those.
OpCategory op_category(const Profile& p, uint32_t e);

// op_category, after the event's own evidence of being a copy or fill (its stats, its line).
OpCategory event_category(const Profile& p, uint32_t line, uint32_t e);

}  // namespace jaxprof
