// Flamegraphs from partial summaries: each host keeps, per device, its flame trees aggregated by
// stack (PartialFlame), and a set of hosts gives the tree compute_flame gives on the same hosts
// loaded together: devices never share frames below their own, so the union is exact.
#pragma once

#include "jaxprof/analysis/flame/flame.h"
#include "jaxprof/model/partial/partial.h"

namespace jaxprof {

// Throws InputError naming a host whose partial lacks the flame stacks (or `options.by`'s tree),
// or was written with other steady-state options, and for an invalid --device regex.
FlameTree flame_from_partials(const PartialSet& set, const FlameOptions& options);

}  // namespace jaxprof
