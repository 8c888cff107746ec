// Table, JSON and CSV output of `jaxprof memory` (JSON schema in docs/json.md).
#pragma once

#include <string>

#include "jaxprof/analysis/memory/memory.h"
#include "jaxprof/render/text/text.h"

namespace jaxprof {

std::string render_memory(const MemoryResult& result, OutputFormat format);

// What a group of live allocations was for, in one cell: its op when recorded, else "in NAME"
// (the JAX function that allocated it), else "(not recorded)".
std::string live_group_op(const LiveAllocationGroup& g);

}  // namespace jaxprof
