// Table, JSON and CSV output of `jaxprof memory` (JSON schema in docs/json.md).
#pragma once

#include <string>

#include "jaxprof/analysis/memory.h"
#include "jaxprof/render/text.h"

namespace jaxprof {

std::string render_memory(const MemoryResult& result, OutputFormat format);

}  // namespace jaxprof
