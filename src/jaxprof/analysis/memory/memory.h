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

// compute_memory in two halves, for hosts read one by one: one profile's part, then several
// parts (in host order) merged, equal to compute_memory of their profiles read as one.
struct MemoryPart {
  int64_t base_ns = 0;      // the profile's clock (Profile::base_ns)
  MemoryTimeline timeline;  // on that clock
  std::vector<StaticMemoryModule> modules;
};
// `cache` (may be null) shares programs between the parts of one set.
MemoryPart compute_memory_part(const Profile& profile, const MemoryOptions& options,
                               ProgramMemoryCache* cache = nullptr);
MemoryResult merge_memory_parts(std::vector<MemoryPart> parts, const MemoryOptions& options);

}  // namespace jaxprof
