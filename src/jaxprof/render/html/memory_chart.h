// The memory timeline of one allocator as an inline SVG chart: bytes in use over time (a step
// line, since the allocator's state holds until its next event), bytes reserved on top where the
// allocator records any, and the peak marked. For the HTML report and Jupyter.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "jaxprof/analysis/memory/memory_timeline.h"

namespace jaxprof {

// `from_ps`/`to_ps`: the time axis (charts of one profile share it); both 0 = the allocator's
// first to last event.
std::string svg_memory_timeline(const AllocatorMemory& allocator, int64_t from_ps = 0,
                                int64_t to_ps = 0);

// One chart per allocator with a known peak, on a shared time axis (the span of all their
// events), in the timeline's order.
std::vector<std::string> svg_memory_timelines(const MemoryTimeline& timeline);

}  // namespace jaxprof
