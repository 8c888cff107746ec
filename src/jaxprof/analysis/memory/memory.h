// `jaxprof memory`: the allocator timeline (what the runtime allocated while the profiler ran)
// and the static memory of each compiled program (what XLA planned), side by side.
#pragma once

#include <string>
#include <vector>

#include "jaxprof/analysis/memory/memory_timeline.h"
#include "jaxprof/analysis/memory/static_memory.h"
#include "jaxprof/model/profile.h"

namespace jaxprof {

struct MemoryOptions {
  MemoryTimelineOptions timeline;
  StaticMemoryOptions programs;
  bool want_timeline = true;
  bool want_programs = true;
};

struct MemoryResult {
  bool has_timeline = false;  // the parts asked for
  bool has_programs = false;
  MemoryTimeline timeline;
  StaticMemory programs;
  // Said when the profile has nothing a part could show (and what to do to get it).
  std::string no_programs_reason;
};

MemoryResult compute_memory(const Profile& profile, const MemoryOptions& options);

}  // namespace jaxprof
