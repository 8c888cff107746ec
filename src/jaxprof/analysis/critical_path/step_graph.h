// One step's dependency graph, built from the profile alone: the work of the step (device ops,
// the host events on the step's own thread) as timed vertices (each node's start and end, one
// vertex per collective instance, the step's end) and the edges that say what each waited for.
//
// Every vertex's measured time is the latest of its predecessors' times plus the edge's weight,
// so replaying the graph with the measured weights gives back the measured times exactly; a
// what-if changes weights (durations, gaps) and replays (what_if.h). The edges
// (docs/critical-path.md):
// - program order on each device lane (a GPU stream, a TPU op line, a CPU device's ops);
// - a GPU kernel's launch: the kernel starts after the host launched it (by correlation id; the
//   launch's time is a fixed source, as the host's own work is not in the graph);
// - the host work that launched an execution: the host event of the step that spans the start of
//   the execution's first op (from its start), else the latest one that ended before it (from its
//   end): an assumption, correlation ids are not used;
// - a collective instance: it ends on every participant a fixed time (its transfer) after the last
//   participant arrived;
// - a host event that waits for the device (it spans the end of the step's device work) ends a
//   fixed time after that work ends;
// - the step's end: a fixed time after its last work ends.
// The gap between a vertex's latest predecessor and its own start (a device idle, a launch not yet
// issued) is kept as the edge's weight and named on the path.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace jaxprof {

enum class NodeKind : uint8_t { kOp, kCollective, kHost };
const char* node_kind_name(NodeKind k);

struct GraphNode {
  // Views into the Profile's strings (and static category names): a step of a million nodes
  // holds no copies of them.
  std::string_view name;      // the HLO op (or event name); the host event's name
  std::string_view category;  // op category (ops/category.h), "host" for host events
  uint32_t lane = 0;          // index into StepGraph::lanes
  uint32_t device = 0;        // index into StepGraph::devices (host events: UINT32_MAX)
  uint32_t host = 0;          // index into Profile::hosts
  NodeKind kind = NodeKind::kOp;
  int64_t start_ps = 0, end_ps = 0;
  // GPU kernels: when the host launched it (its launch event, found by correlation id).
  int64_t launch_ps = kNoLaunch;
  static constexpr int64_t kNoLaunch = INT64_MIN;
  int64_t duration_ps() const { return end_ps - start_ps; }
};

// What an edge's weight is, for what-ifs and for naming the path.
enum class EdgeKind : uint8_t {
  kDuration,    // a node's own time (start -> end), scaled with the node
  kTail,        // a collective's transfer after the last arrival (barrier -> end)
  kDeviceGap,   // a device op waited after its latest predecessor ended (device idle)
  kLaunchGap,   // a device op waited after the host work that launched it (or its launch)
  kHostGap,     // a host event waited after the host event before it (host/idle)
  kStepEndGap,  // the step ended after its last work
  kZero,        // arrival at a barrier
  // A host event waits for its host's device op that ends last within it: it ends a fixed time
  // after that op (its tail). Binds only in what-if replays (as measured, the event's own time
  // binds), where the event's own time is that tail after its start.
  kHostSpan,
  // A participant of a collective instance that starts after the step (merged steps of several
  // hosts cut instances) arrives a fixed time after the last op of its lane in the step. Binds
  // only in what-if replays, where the instance's transfer runs from the last arrival in or out
  // of the step (as measured, from the last in the step).
  kOutside,
};

// The weight of an edge that does not bind as measured (a collective's time without its barrier):
// so far below any time that it never sets a vertex unless a what-if gives it a weight.
inline constexpr int64_t kAbsentEdge = INT64_MIN / 4;

struct GraphEdge {
  uint32_t from = 0, to = 0;  // vertices
  int64_t weight_ps = 0;      // measured
  EdgeKind kind = EdgeKind::kZero;
  uint32_t node = UINT32_MAX;  // the node whose duration or tail it is, or whose start it delays
};

struct StepGraph {
  std::vector<std::string> devices;  // device names of the nodes
  std::vector<std::string> lanes;    // "device" or "device/line"
  std::vector<GraphNode> nodes;
  // The nodes' distinct names, and each node's among them: a what-if matches its pattern once
  // per name (a step repeats a few thousand names over up to millions of nodes).
  std::vector<std::string_view> names, categories;
  std::vector<uint32_t> name_of, category_of;
  // Vertices: node n starts at 2n and ends at 2n+1; then one per collective instance; then one per
  // kernel launch (from first_launch on); the last is the step's end. Sources (no predecessors)
  // keep their measured time in every replay.
  std::vector<int64_t> time_ps;
  std::vector<GraphEdge> edges;    // by target vertex
  std::vector<uint32_t> first_in;  // per vertex, its edges in [first_in[v], first_in[v+1])
  std::vector<uint32_t> order;     // vertices in an order where every edge goes forward
  bool cyclic = false;             // some vertices lie on a cycle (they follow by time in order)
  int64_t start_ps = 0;            // the step's start
  uint32_t first_launch = 0;
  std::vector<uint32_t> instance_members;  // as StepWork's
  // The host events that span a device op of their host (kHostSpan), by node: each one's tail.
  std::vector<std::pair<uint32_t, int64_t>> span_tails;
  // Per host: its clock's offset from the others', from when the step's instances across hosts
  // end on each (an instance ends at one instant on every participant); empty when none spans
  // hosts. What-if replays meet at collectives on the hosts' common clock.
  std::vector<int64_t> host_offset;
  // Per instance: its last arrival in replays (on the common clock, counting the participants
  // after the step that kOutside edges bring in) less its measured barrier.
  std::vector<int64_t> replay_lag;
  uint32_t outside_edges = 0;
  int64_t offset_of(uint32_t host) const {
    return host < host_offset.size() ? host_offset[host] : 0;
  }
  bool is_launch(uint32_t v) const { return v >= first_launch && v < end_vertex(); }
  uint32_t end_vertex() const { return static_cast<uint32_t>(time_ps.size() - 1); }
  static uint32_t start_of(uint32_t node) { return 2 * node; }
  static uint32_t end_of(uint32_t node) { return 2 * node + 1; }
};

// Vertex times with changed weights, into `t`: `weight` gives each edge's weight in this replay.
// (Replays one after another reuse `t`'s memory: a graph of a million vertices, a dozen replays.)
template <typename Weight>
void replay(const StepGraph& g, Weight&& weight, std::vector<int64_t>& t) {
  t.assign(g.time_ps.size(), 0);
  for (uint32_t v : g.order) {
    const uint32_t b = g.first_in[v], e = g.first_in[v + 1];
    if (b == e) {
      if constexpr (requires { weight.source(v); })
        t[v] = weight.source(v);  // a source that a what-if moves
      else
        t[v] = g.time_ps[v];
      continue;
    }
    int64_t best = INT64_MIN;
    for (uint32_t i = b; i < e; ++i) best = std::max(best, t[g.edges[i].from] + weight(g.edges[i]));
    t[v] = best;
  }
}

template <typename Weight>
std::vector<int64_t> replay(const StepGraph& g, Weight&& weight) {
  std::vector<int64_t> t;
  replay(g, weight, t);
  return t;
}

// The nodes of one step, as gathered from the profile, before edges are added.
struct StepWork {
  int64_t start_ps = 0, end_ps = 0;
  std::vector<std::string> devices, lanes;
  std::vector<GraphNode> nodes;  // device ops by lane then start; host events by start
  // Per node: the collective instance it takes part in (UINT32_MAX: none).
  std::vector<uint32_t> instance;
  uint32_t instances = 0;
  // Per device node: whether it is the first op of its module execution on its device.
  std::vector<uint8_t> execution_start;
  // Per instance: its participants in the whole profile (empty: those in the step are all).
  std::vector<uint32_t> instance_members;
  // The participants of the step's instances that start after the step.
  struct Outside {
    uint32_t instance, lane;
    int64_t start_ps;
  };
  std::vector<Outside> outside;
};

// Adds the edges and orders the vertices.
StepGraph build_step_graph(StepWork work);

// The edge into `v` that bound its measured time: the first of its latest predecessors (an
// edge absent as measured never binds), leaving out those from vertices marked in `skip`.
// UINT32_MAX for a source.
uint32_t binding_edge(const StepGraph& g, uint32_t v, const std::vector<uint8_t>* skip = nullptr);

// The measured critical path as edges, from the step's end back to a source: at each vertex the
// edge that bound it, never back to a vertex already on the path.
std::vector<uint32_t> binding_path(const StepGraph& g);

}  // namespace jaxprof
