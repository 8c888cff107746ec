// A step graph's node for graphs built by hand in tests: an op or collective on lane `lane` of
// host `host`, [s, e) on the profile's clock.
#pragma once

#include <string_view>

#include "jaxprof/analysis/critical_path/step_graph.h"

namespace jaxprof {

inline GraphNode graph_node(std::string_view name, uint32_t lane, uint32_t host, NodeKind kind,
                            int64_t s, int64_t e) {
  GraphNode n;
  n.name = name;  // a literal: GraphNode holds a view
  n.category = kind == NodeKind::kCollective ? "collective" : "gemm";
  n.lane = n.device = lane;
  n.host = host;
  n.kind = kind;
  n.start_ps = s;
  n.end_ps = e;
  return n;
}

}  // namespace jaxprof
