#include "jaxprof/analysis/critical_path/held_collectives.h"

#include <algorithm>
#include <unordered_set>

namespace jaxprof {

namespace {

constexpr uint32_t kNone = UINT32_MAX;

}  // namespace

std::vector<HeldCollective> held_collectives(const StepGraph& g,
                                             const std::vector<std::string>& host_names,
                                             size_t* partial) {
  if (partial) *partial = 0;
  const uint32_t barrier0 = 2 * static_cast<uint32_t>(g.nodes.size());
  std::vector<HeldCollective> out;
  for (uint32_t v = barrier0; v < g.first_launch; ++v) {
    // Its participants in the step (those after it, kOutside, come last).
    const uint32_t b = g.first_in[v];
    uint32_t e = g.first_in[v + 1];
    while (e > b && g.edges[e - 1].kind == EdgeKind::kOutside) --e;
    const uint32_t instance = v - barrier0;
    const uint32_t members =
        instance < g.instance_members.size() ? g.instance_members[instance] : e - b;
    if (members < 2) continue;  // one participant: an op like the others
    if (e - b < members) {
      if (partial) ++*partial;
      continue;
    }
    uint32_t last = kNone;
    int64_t first_ps = INT64_MAX;
    std::unordered_set<uint32_t> hosts;
    for (uint32_t i = b; i < e; ++i) {
      const GraphEdge& edge = g.edges[i];
      const int64_t t = g.time_ps[edge.from];
      first_ps = std::min(first_ps, t);
      hosts.insert(g.nodes[edge.node].host);
      // Ties go to the first participant listed (by lane, then start): a stable answer.
      if (last == kNone || t > g.time_ps[g.edges[last].from]) last = i;
    }
    const GraphNode& held = g.nodes[g.edges[last].node];
    HeldCollective c;
    c.name = held.name;
    c.participants = e - b;
    c.hosts = static_cast<uint32_t>(hosts.size());
    c.host = held.host < host_names.size() ? host_names[held.host] : "";
    c.device = held.device < g.devices.size() ? g.devices[held.device] : "";
    c.arrival_ps = g.time_ps[v];
    c.spread_ps = c.arrival_ps - first_ps;
    const uint32_t before = binding_edge(g, g.edges[last].from);
    if (before != kNone) {
      const uint32_t from = g.edges[before].from;
      if (from < barrier0) {
        const GraphNode& n = g.nodes[from / 2];
        c.after = n.name;
        c.after_kind = node_kind_name(n.kind);
      } else if (g.is_launch(from)) {
        c.after = held.name;
        c.after_kind = "launch";
      }
    }
    out.push_back(std::move(c));
  }
  std::stable_sort(out.begin(), out.end(), [](const HeldCollective& a, const HeldCollective& b) {
    return a.arrival_ps < b.arrival_ps;
  });
  return out;
}

}  // namespace jaxprof
