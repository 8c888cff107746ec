// The "Memory" section of the HTML report: the allocators' in-use charts with the peaks marked,
// their peaks against the allocators' own statistics, and the compiled programs' static memory.
#pragma once

#include <string>

#include "jaxprof/analysis/memory/memory.h"
#include "jaxprof/render/html/html_page.h"

namespace jaxprof {

std::string html_memory_body(HtmlPageParts& parts, const MemoryResult& memory, size_t top);

}  // namespace jaxprof
