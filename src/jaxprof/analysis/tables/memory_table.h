// memory: one row per allocator event (MemoryAllocation / MemoryDeallocation), the events
// `memory` reads, with the allocator named as `memory` names it and its state after the event:
// bytes in use, reserved, available, the allocator's own peak, and what was allocated (bytes,
// op, shape, data type, region) where the producer recorded it.
#pragma once

#include "jaxprof/analysis/tables/table.h"
#include "jaxprof/model/profile.h"

namespace jaxprof {

RecordTable memory_table(const Profile& profile);

}  // namespace jaxprof
