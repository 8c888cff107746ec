#include "jaxprof/analysis/memory/memory.h"

#include <algorithm>
#include <limits>

namespace jaxprof {

MemoryPart compute_memory_part(const Profile& p, const MemoryOptions& o,
                               ProgramMemoryCache* cache) {
  MemoryPart part;
  part.base_ns = p.base_ns;
  if (o.want_timeline) part.timeline = compute_memory_timeline(p, o.timeline);
  if (o.want_programs) part.modules = static_memory_modules(p.hlo, o.programs, cache);
  return part;
}

MemoryResult merge_memory_parts(std::vector<MemoryPart> parts, const MemoryOptions& o) {
  MemoryResult r;
  r.has_timeline = o.want_timeline;
  r.has_programs = o.want_programs;
  if (o.want_timeline) {
    // One profile of the hosts counts time from the earliest host's.
    int64_t base = std::numeric_limits<int64_t>::max();
    for (const MemoryPart& part : parts) base = std::min(base, part.base_ns);
    std::vector<MemoryTimeline> timelines;
    std::vector<int64_t> shift_ps;
    for (MemoryPart& part : parts) {
      timelines.push_back(std::move(part.timeline));
      shift_ps.push_back((part.base_ns - base) * 1000);
    }
    r.timeline = merge_memory_timelines(std::move(timelines), shift_ps);
  }
  if (o.want_programs) {
    std::vector<std::vector<StaticMemoryModule>> modules;
    bool no_hlo = true;
    for (MemoryPart& part : parts) {
      no_hlo = no_hlo && part.modules.empty();
      modules.push_back(std::move(part.modules));
    }
    r.programs = merge_static_memory(modules);
    if (r.programs.programs.empty()) {
      if (no_hlo) {
        r.no_programs_reason =
            "no compiled programs in this profile: jax.profiler writes their HloProtos (with the "
            "buffer assignment) into the /host:metadata plane; pass an XLA dump "
            "(--xla_dump_to=DIR --xla_dump_hlo_as_proto, the *after_optimizations.hlo.pb files) "
            "beside the profile otherwise";
      } else if (r.programs.modules_without_assignment > 0) {
        r.no_programs_reason =
            "the compiled programs carry no buffer assignment (an HLO dump taken before buffer "
            "assignment, or a producer that leaves it out): static memory is unknown";
      } else {
        r.no_programs_reason = "no program matches --module";
      }
    }
  }
  return r;
}

MemoryResult compute_memory(const Profile& p, const MemoryOptions& o) {
  std::vector<MemoryPart> parts;
  parts.push_back(compute_memory_part(p, o));
  return merge_memory_parts(std::move(parts), o);
}

}  // namespace jaxprof
