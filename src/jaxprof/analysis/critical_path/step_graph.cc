#include "jaxprof/analysis/critical_path/step_graph.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "jaxprof/analysis/stats/significance.h"

namespace jaxprof {

const char* node_kind_name(NodeKind k) {
  switch (k) {
    case NodeKind::kOp:
      return "op";
    case NodeKind::kCollective:
      return "collective";
    case NodeKind::kHost:
      return "host";
  }
  return "op";
}

namespace {

constexpr uint32_t kNone = UINT32_MAX;

struct EdgeList {
  std::vector<GraphEdge> edges;
  const std::vector<int64_t>& time;

  // `to` starts a fixed time (its measured lag) after the latest of `from` ends: the same weight
  // on every edge, so that the latest predecessor gives back the measured time.
  void lag(uint32_t to, const std::vector<uint32_t>& from, EdgeKind kind, uint32_t node,
           EdgeKind host_kind = EdgeKind::kZero, uint32_t host_vertex = kNone) {
    if (from.empty()) return;
    int64_t ready = INT64_MIN;
    uint32_t binding = from[0];
    for (uint32_t f : from)
      if (time[f] > ready) ready = time[f], binding = f;
    // A device op whose latest predecessor is the host work that launched it waited for a launch.
    const EdgeKind k = binding == host_vertex ? host_kind : kind;
    for (uint32_t f : from) edges.push_back({f, to, time[to] - ready, k, node});
  }
};

// Distinct strings in order of first sight, each view's index among them. Views of one string of
// the Profile share its address: a small table by address answers most of them without hashing
// the text; the text decides the rest (equal texts at two addresses are one).
class DistinctViews {
 public:
  explicit DistinctViews(std::vector<std::string_view>& out) : out_(out) {}
  uint32_t id(std::string_view s) {
    Slot& slot = slots_[(reinterpret_cast<uintptr_t>(s.data()) >> 3 ^ s.size()) % kSlots];
    if (slot.data == s.data() && slot.size == s.size() && slot.data) return slot.id;
    auto [it, added] = index_.try_emplace(s, static_cast<uint32_t>(out_.size()));
    if (added) out_.push_back(s);
    slot = {s.data(), s.size(), it->second};
    return it->second;
  }

 private:
  struct Slot {
    const char* data = nullptr;
    size_t size = 0;
    uint32_t id = 0;
  };
  static constexpr size_t kSlots = 4096;
  std::vector<std::string_view>& out_;
  std::unordered_map<std::string_view, uint32_t> index_;
  std::vector<Slot> slots_ = std::vector<Slot>(kSlots);
};

// The host event that launched an execution starting at `t`: the one on the step's thread that
// spans `t` (the device started while the call was still running: its start is the launch),
// else the one that ended last at or before `t` (its end is).
uint32_t launcher(const std::vector<GraphNode>& nodes, const std::vector<uint32_t>& host,
                  const GraphNode& op) {
  const int64_t t = op.start_ps;
  uint32_t best = kNone;
  for (uint32_t h : host) {
    if (nodes[h].host != op.host) continue;  // launched by its own host
    if (nodes[h].start_ps <= t && t < nodes[h].end_ps) return StepGraph::start_of(h);
    if (nodes[h].end_ps > t) continue;
    if (best == kNone || nodes[h].end_ps >= nodes[best].end_ps) best = h;
  }
  return best == kNone ? kNone : StepGraph::end_of(best);
}

// Kahn's order over the edges (sorted by target); vertices left on a cycle follow by time.
std::vector<uint32_t> forward_order(const StepGraph& g, bool& cyclic) {
  const size_t n = g.time_ps.size();
  std::vector<uint32_t> indegree(n, 0);
  // Each vertex's successors, packed (one vector per vertex cost a million allocations).
  std::vector<uint32_t> first_out(n + 1, 0), out(g.edges.size());
  for (const GraphEdge& e : g.edges) {
    ++indegree[e.to];
    ++first_out[e.from + 1];
  }
  for (size_t v = 0; v < n; ++v) first_out[v + 1] += first_out[v];
  {
    std::vector<uint32_t> at(first_out.begin(), first_out.end() - 1);
    for (const GraphEdge& e : g.edges) out[at[e.from]++] = e.to;
  }
  // Any order where edges go forward gives the same replay: a plain queue (a heap by time cost
  // a tenth of the command).
  std::vector<uint32_t> order;
  order.reserve(n);
  for (uint32_t v = 0; v < n; ++v)
    if (indegree[v] == 0) order.push_back(v);
  for (size_t k = 0; k < order.size(); ++k) {
    const uint32_t v = order[k];
    for (uint32_t j = first_out[v]; j < first_out[v + 1]; ++j)
      if (--indegree[out[j]] == 0) order.push_back(out[j]);
  }
  std::vector<uint8_t> placed(n, 0);
  for (uint32_t v : order) placed[v] = 1;
  cyclic = order.size() < n;
  if (cyclic) {
    std::vector<uint32_t> rest;
    for (uint32_t v = 0; v < n; ++v)
      if (!placed[v]) rest.push_back(v);
    std::stable_sort(rest.begin(), rest.end(),
                     [&](uint32_t a, uint32_t b) { return g.time_ps[a] < g.time_ps[b]; });
    order.insert(order.end(), rest.begin(), rest.end());
  }
  return order;
}

// Edges by target, in the order given (a counting sort: stable, linear), and the vertices' order.
void index_edges(StepGraph& g, std::vector<GraphEdge> edges) {
  g.first_in.assign(g.time_ps.size() + 1, 0);
  for (const GraphEdge& e : edges) ++g.first_in[e.to + 1];
  for (size_t v = 0; v < g.time_ps.size(); ++v) g.first_in[v + 1] += g.first_in[v];
  g.edges.resize(edges.size());
  {
    std::vector<uint32_t> at(g.first_in.begin(), g.first_in.end() - 1);
    for (const GraphEdge& e : edges) g.edges[at[e.to]++] = e;
  }
  edges = {};
  g.order = forward_order(g, g.cyclic);
}

// Per host, its clock's offset from the others': the median, over the step's instances that span
// hosts, of when the instance ends on it less the median over its hosts. Empty when none spans
// hosts.
std::vector<int64_t> host_offsets(const StepGraph& g, const StepWork& work) {
  std::vector<std::vector<std::pair<uint32_t, int64_t>>> ends(work.instances);
  uint32_t hosts = 0;
  for (uint32_t i = 0; i < g.nodes.size(); ++i)
    if (work.instance[i] != kNone) {
      ends[work.instance[i]].push_back({g.nodes[i].host, g.nodes[i].end_ps});
      hosts = std::max(hosts, g.nodes[i].host + 1);
    }
  std::vector<std::vector<double>> diffs(hosts);
  bool across = false;
  std::vector<double> per_host;
  for (auto& e : ends) {
    std::sort(e.begin(), e.end());
    per_host.clear();
    for (size_t k = 0; k < e.size(); ++k)
      if (k == 0 || e[k].first != e[k - 1].first)
        per_host.push_back(static_cast<double>(e[k].second));
    if (per_host.size() < 2) continue;
    across = true;
    const double mid = median(per_host);
    for (size_t k = 0; k < e.size(); ++k)
      if (k == 0 || e[k].first != e[k - 1].first)
        diffs[e[k].first].push_back(static_cast<double>(e[k].second) - mid);
  }
  if (!across) return {};
  std::vector<int64_t> out(hosts, 0);
  for (uint32_t h = 0; h < hosts; ++h)
    if (!diffs[h].empty()) out[h] = std::llround(median(std::move(diffs[h])));
  return out;
}

// The participants of the step's instances that start after it (kOutside): each arrives a fixed
// time after the last op of its lane in the step, where it has one. With `outside` false, none.
// Sets replay_lag.
void add_outside(StepGraph& g, const StepWork& work, const std::vector<uint32_t>& members,
                 const std::vector<uint32_t>& lane_last, std::vector<GraphEdge>* outside) {
  const uint32_t barrier0 = 2 * static_cast<uint32_t>(g.nodes.size());
  std::vector<int64_t> last(work.instances, INT64_MIN);  // on the common clock
  for (uint32_t i = 0; i < g.nodes.size(); ++i) {
    const uint32_t inst = work.instance[i];
    if (inst != kNone && members[inst] > 1)
      last[inst] = std::max(last[inst], g.nodes[i].start_ps - g.offset_of(g.nodes[i].host));
  }
  for (const StepWork::Outside& o : work.outside) {
    if (!outside || o.instance >= work.instances || members[o.instance] <= 1 ||
        o.lane >= lane_last.size())
      continue;
    const uint32_t l = lane_last[o.lane];
    if (l == kNone) continue;
    outside->push_back({StepGraph::end_of(l), barrier0 + o.instance, o.start_ps - g.nodes[l].end_ps,
                        EdgeKind::kOutside, l});
    ++g.outside_edges;
    last[o.instance] = std::max(last[o.instance], o.start_ps - g.offset_of(g.nodes[l].host));
  }
  g.replay_lag.assign(work.instances, 0);
  for (uint32_t k = 0; k < work.instances; ++k)
    if (last[k] != INT64_MIN) g.replay_lag[k] = last[k] - g.time_ps[barrier0 + k];
}

// The hosts' clock offsets, the participants after the step, the edges by target and the order.
void finish_edges(StepGraph& g, const StepWork& work, const std::vector<uint32_t>& members,
                  const std::vector<uint32_t>& lane_last, std::vector<GraphEdge> edges) {
  g.host_offset = host_offsets(g, work);
  add_outside(g, work, members, lane_last, &edges);
  index_edges(g, std::move(edges));
  if (g.cyclic && g.outside_edges > 0) {
    // Kept only where they close no cycle: the measured graph's order stands.
    std::vector<GraphEdge> kept;
    kept.reserve(g.edges.size() - g.outside_edges);
    for (const GraphEdge& e : g.edges)
      if (e.kind != EdgeKind::kOutside) kept.push_back(e);
    g.outside_edges = 0;
    add_outside(g, work, members, lane_last, nullptr);
    index_edges(g, std::move(kept));
  }
}

}  // namespace

StepGraph build_step_graph(StepWork work) {
  StepGraph g;
  g.start_ps = work.start_ps;
  g.devices = std::move(work.devices);
  g.lanes = std::move(work.lanes);
  g.nodes = std::move(work.nodes);
  g.instance_members = std::move(work.instance_members);
  const uint32_t n = static_cast<uint32_t>(g.nodes.size());
  {
    DistinctViews names(g.names), categories(g.categories);
    g.name_of.reserve(n);
    g.category_of.reserve(n);
    for (const GraphNode& node : g.nodes) {
      g.name_of.push_back(names.id(node.name));
      g.category_of.push_back(categories.id(node.category));
    }
  }
  const uint32_t barrier0 = 2 * n;
  uint32_t launches = 0;
  for (const GraphNode& node : g.nodes) launches += node.launch_ps != GraphNode::kNoLaunch;
  g.first_launch = barrier0 + work.instances;
  const uint32_t end = g.first_launch + launches;
  g.time_ps.assign(end + 1, 0);
  std::vector<uint32_t> members(work.instances, 0);
  std::vector<uint32_t> lane_last(g.lanes.size(), kNone), lane_prev(n, kNone), host;
  int64_t last_end = work.end_ps;
  // Per host, the end of its device work (INT64_MIN: none): a host index per node, a few hosts.
  std::vector<int64_t> device_end;
  for (uint32_t i = 0; i < n; ++i) {
    const GraphNode& node = g.nodes[i];
    g.time_ps[StepGraph::start_of(i)] = node.start_ps;
    g.time_ps[StepGraph::end_of(i)] = node.end_ps;
    last_end = std::max(last_end, node.end_ps);
    lane_prev[i] = lane_last[node.lane];
    lane_last[node.lane] = i;
    if (node.kind == NodeKind::kHost) {
      host.push_back(i);
    } else {
      if (node.host >= device_end.size()) device_end.resize(node.host + 1, INT64_MIN);
      device_end[node.host] = std::max(device_end[node.host], node.end_ps);
    }
    if (work.instance[i] != kNone) ++members[work.instance[i]];
  }
  for (uint32_t b = 0; b < work.instances; ++b) g.time_ps[barrier0 + b] = INT64_MIN;
  for (uint32_t i = 0; i < n; ++i)
    if (work.instance[i] != kNone) {
      int64_t& t = g.time_ps[barrier0 + work.instance[i]];
      t = std::max(t, g.nodes[i].start_ps);
    }
  g.time_ps[end] = last_end;

  // The host events that wait for the device: on each host, the last one that spans the end of
  // its host's device work.
  std::vector<uint8_t> waits(n, 0);
  std::unordered_map<uint32_t, uint32_t> wait_of;  // per host
  for (uint32_t h : host) {
    const uint32_t x = g.nodes[h].host;
    if (x < device_end.size() && device_end[x] != INT64_MIN &&
        g.nodes[h].start_ps <= device_end[x] && g.nodes[h].end_ps >= device_end[x])
      wait_of[g.nodes[h].host] = h;
  }
  for (const auto& [_, h] : wait_of) waits[h] = 1;

  // Per host, its device nodes' ends, in order: the op a host event spans that ends last in it.
  std::unordered_map<uint32_t, std::vector<std::pair<int64_t, uint32_t>>> device_ends;
  if (!host.empty()) {
    for (uint32_t i = 0; i < n; ++i)
      if (g.nodes[i].kind != NodeKind::kHost)
        device_ends[g.nodes[i].host].push_back({g.nodes[i].end_ps, i});
    for (auto& [_, ends] : device_ends) std::sort(ends.begin(), ends.end());
  }
  auto spanned = [&](const GraphNode& h) -> uint32_t {
    auto it = device_ends.find(h.host);
    if (it == device_ends.end()) return kNone;
    const auto& ends = it->second;
    auto last = std::upper_bound(ends.begin(), ends.end(), std::make_pair(h.end_ps, kNone));
    if (last == ends.begin() || std::prev(last)->first <= h.start_ps) return kNone;
    return std::prev(last)->second;
  };

  EdgeList list{{}, g.time_ps};
  // Sized once: most nodes have two or three edges (pages never written cost nothing).
  list.edges.reserve(3 * static_cast<size_t>(n) + launches + g.lanes.size() + 16);
  uint32_t next_launch = g.first_launch;
  std::vector<uint32_t> from;  // one vector for every node's predecessors (a million nodes)
  for (uint32_t i = 0; i < n; ++i) {
    const GraphNode& node = g.nodes[i];
    const uint32_t s = StepGraph::start_of(i), e = StepGraph::end_of(i);
    from.clear();
    if (lane_prev[i] != kNone) from.push_back(StepGraph::end_of(lane_prev[i]));
    if (node.kind == NodeKind::kHost) {
      list.lag(s, from, EdgeKind::kHostGap, i);
    } else {
      uint32_t launch = kNone;
      if (work.execution_start[i]) {
        launch = launcher(g.nodes, host, node);
        if (launch != kNone) from.push_back(launch);
      }
      if (node.launch_ps != GraphNode::kNoLaunch) {
        g.time_ps[next_launch] = node.launch_ps;
        from.push_back(next_launch);
        if (launch == kNone || node.launch_ps > g.time_ps[launch]) launch = next_launch;
        ++next_launch;
      }
      list.lag(s, from, EdgeKind::kDeviceGap, i, EdgeKind::kLaunchGap, launch);
    }
    const uint32_t inst = work.instance[i];
    if (inst != kNone && members[inst] > 1) {
      list.edges.push_back({s, barrier0 + inst, 0, EdgeKind::kZero, i});
      // Its own time alone, not binding as measured: what remains when the barrier goes.
      list.edges.push_back({s, e, kAbsentEdge, EdgeKind::kDuration, i});
      list.edges.push_back(
          {barrier0 + inst, e, node.end_ps - g.time_ps[barrier0 + inst], EdgeKind::kTail, i});
    } else if (waits[i]) {
      std::vector<uint32_t> waited{s};
      for (uint32_t j = 0; j < g.lanes.size(); ++j)
        if (lane_last[j] != kNone && g.nodes[lane_last[j]].kind != NodeKind::kHost &&
            g.nodes[lane_last[j]].host == node.host)
          waited.push_back(StepGraph::end_of(lane_last[j]));
      list.lag(e, waited, EdgeKind::kTail, i);
    } else {
      list.edges.push_back({s, e, node.duration_ps(), EdgeKind::kDuration, i});
      const uint32_t d = node.kind == NodeKind::kHost ? spanned(node) : kNone;
      if (d != kNone) {
        const int64_t tail = node.end_ps - g.nodes[d].end_ps;
        list.edges.push_back({StepGraph::end_of(d), e, tail, EdgeKind::kHostSpan, i});
        g.span_tails.push_back({i, tail});
      }
    }
  }
  std::vector<uint32_t> last;
  for (uint32_t l : lane_last)
    if (l != kNone) last.push_back(StepGraph::end_of(l));
  list.lag(end, last, EdgeKind::kStepEndGap, kNone);
  finish_edges(g, work, members, lane_last, std::move(list.edges));
  return g;
}

uint32_t binding_edge(const StepGraph& g, uint32_t v, const std::vector<uint8_t>* skip) {
  uint32_t best = kNone;
  for (uint32_t i = g.first_in[v]; i < g.first_in[v + 1]; ++i) {
    const GraphEdge& e = g.edges[i];
    if (e.weight_ps == kAbsentEdge || e.kind == EdgeKind::kHostSpan || e.kind == EdgeKind::kOutside)
      continue;
    if (skip && (*skip)[e.from]) continue;
    if (best == kNone ||
        g.time_ps[e.from] + e.weight_ps > g.time_ps[g.edges[best].from] + g.edges[best].weight_ps)
      best = i;
  }
  return best;
}

std::vector<uint32_t> binding_path(const StepGraph& g) {
  std::vector<uint32_t> path;
  // Edges of no weight between vertices at one time can close a loop (two hosts' waits at one
  // instant, a graph with a cycle): the walk never comes back to a vertex it left, taking the
  // next binding edge instead, and stops where every one would.
  std::vector<uint8_t> seen(g.time_ps.size(), 0);
  for (uint32_t v = g.end_vertex();;) {
    seen[v] = 1;
    uint32_t i = binding_edge(g, v);
    if (i != kNone && seen[g.edges[i].from]) i = binding_edge(g, v, &seen);
    if (i == kNone) break;
    path.push_back(i);
    v = g.edges[i].from;
  }
  return path;
}

}  // namespace jaxprof
