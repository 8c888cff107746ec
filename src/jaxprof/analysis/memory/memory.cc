#include "jaxprof/analysis/memory/memory.h"

namespace jaxprof {

MemoryResult compute_memory(const Profile& p, const MemoryOptions& o) {
  MemoryResult r;
  r.has_timeline = o.want_timeline;
  r.has_programs = o.want_programs;
  if (o.want_timeline) r.timeline = compute_memory_timeline(p, o.timeline);
  if (o.want_programs) {
    r.programs = compute_static_memory(p.hlo, o.programs);
    if (r.programs.programs.empty()) {
      if (p.hlo.empty()) {
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

}  // namespace jaxprof
