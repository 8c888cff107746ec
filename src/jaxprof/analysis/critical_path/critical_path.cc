#include "jaxprof/analysis/critical_path/critical_path.h"

#include <fmt/format.h>
#include <re2/re2.h>

#include <algorithm>
#include <functional>
#include <limits>
#include <map>
#include <numeric>
#include <optional>
#include <unordered_map>

#include "jaxprof/analysis/cost/roofline.h"
#include "jaxprof/analysis/critical_path/step_work.h"
#include "jaxprof/common/parallel_parts.h"

namespace jaxprof {

namespace {

constexpr uint32_t kNone = UINT32_MAX;

const char* kAssumptions[] = {
    "program order: each device lane (a GPU stream, a TPU op line, a CPU device's ops) runs its "
    "ops one after another; an op nested in another on its lane is part of it",
    "GPU kernels wait for their launch on the host (found by correlation id); the launch's "
    "time stays as measured, the host's own work being outside the graph",
    "launch: an execution's first op waits for the host event of the step (directly under the "
    "step's annotation) that spans its start, from that event's start, else for the latest one "
    "that ended before it; correlation ids are not used",
    "collectives: an instance (matched across devices and hosts by the collectives analysis) ends "
    "on every participant a fixed time after its last participant arrived; scaling it scales that "
    "time, the participants still meet",
    "host waits: a host event that spans the end of the step's device work ends a fixed time after "
    "that work ends",
    "host spans (what-if replays only): another host event within which a device op of its host "
    "ends ends a fixed time after the last such op (as measured its own time binds the path)",
    "gaps: the time between an event and its latest predecessor (device idle, a launch not issued "
    "yet, host time between events) stays as measured, and so does the step's tail after its last "
    "work",
    "durations are timeline durations (placement on the host-aligned clock), so the path tiles "
    "the step",
};

struct Walk {
  const StepGraph& g;
  const std::vector<Host>& hosts;
  std::vector<PathSegment> path;  // backwards
  int64_t cursor = 0;

  void add(int64_t start, int64_t end, const GraphNode* node, std::string_view name,
           std::string_view kind, std::string_view category, uint32_t host) {
    end = std::min(end, cursor);
    start = std::min(std::max(start, g.start_ps), end);  // a launch may precede the step
    if (end > start) {
      PathSegment s;
      if (host < hosts.size()) s.host = hosts[host].name;
      s.device = node && node->device < g.devices.size() ? g.devices[node->device] : "";
      s.name = name;
      s.kind = kind;
      s.category = category;
      s.start_ps = start;
      s.duration_ps = end - start;
      path.push_back(std::move(s));
    }
    cursor = std::min(cursor, start);
  }
};

const char* gap_name(EdgeKind k) {
  switch (k) {
    case EdgeKind::kDeviceGap:
      return "device/idle";
    case EdgeKind::kLaunchGap:
      return "host/launch";
    case EdgeKind::kStepEndGap:
      return "host/step-end";
    default:
      return "host/idle";
  }
}

// From the step's end back to its start, through the predecessor that bound each vertex.
std::vector<PathSegment> walk_path(const StepGraph& g, const std::vector<Host>& hosts,
                                   uint32_t default_host, std::vector<int64_t>& on_path) {
  Walk w{g, hosts, {}, g.time_ps[g.end_vertex()]};
  on_path.assign(g.nodes.size(), 0);
  uint32_t v = g.end_vertex();
  const std::vector<uint32_t> edges = binding_path(g);
  // A segment per edge at most, and the step's start: sized once (a path may hold hundreds of
  // thousands).
  w.path.reserve(edges.size() + 1);
  for (uint32_t i : edges) {
    const GraphEdge& edge = g.edges[i];
    const int64_t from_t = g.time_ps[edge.from];
    const GraphNode* node = edge.node == kNone ? nullptr : &g.nodes[edge.node];
    const int64_t before = w.cursor;
    if (edge.kind == EdgeKind::kDuration || edge.kind == EdgeKind::kTail) {
      w.add(from_t, g.time_ps[v], node, node->name, node_kind_name(node->kind), node->category,
            node->host);
      on_path[edge.node] += before - w.cursor;
    } else if (edge.kind != EdgeKind::kZero) {
      const uint32_t host = node ? node->host : default_host;
      const bool device = edge.kind == EdgeKind::kDeviceGap;
      w.add(from_t, g.time_ps[v], device ? node : nullptr, gap_name(edge.kind), "gap",
            gap_category(edge.kind), host);
    }
    v = edge.from;
  }
  // Until the work the walk ended at: that work's host's time (the first host's, when several
  // mark the step).
  const uint32_t first_host = v < 2 * g.nodes.size() ? g.nodes[v / 2].host : default_host;
  w.add(g.start_ps, w.cursor, nullptr, "host/step-start", "gap", "host-idle", first_host);
  std::reverse(w.path.begin(), w.path.end());
  return std::move(w.path);
}

// Per node: how much later it could end without delaying the step (latest allowed end - end).
std::vector<int64_t> node_slack(const StepGraph& g) {
  const size_t n = g.time_ps.size();
  const int64_t end = g.time_ps[g.end_vertex()];
  std::vector<int64_t> latest(n, INT64_MAX);
  latest[g.end_vertex()] = end;
  for (auto it = g.order.rbegin(); it != g.order.rend(); ++it) {
    const uint32_t v = *it;
    if (latest[v] == INT64_MAX) latest[v] = end;  // reaches no end: due by the step's end
    for (uint32_t i = g.first_in[v]; i < g.first_in[v + 1]; ++i) {
      const GraphEdge& e = g.edges[i];
      if (e.weight_ps == kAbsentEdge || e.kind == EdgeKind::kHostSpan ||
          e.kind == EdgeKind::kOutside)
        continue;
      latest[e.from] = std::min(latest[e.from], latest[v] - e.weight_ps);
    }
  }
  std::vector<int64_t> slack(g.nodes.size());
  for (uint32_t i = 0; i < g.nodes.size(); ++i)
    slack[i] = std::max<int64_t>(0, latest[StepGraph::end_of(i)] - g.time_ps[StepGraph::end_of(i)]);
  return slack;
}

std::vector<PathOp> step_ops(const StepGraph& g, const std::vector<int64_t>& on_path,
                             const std::vector<int64_t>& slack) {
  // By the graph's index of names (in order of first sight, as the ops are listed).
  std::vector<size_t> index(g.names.size(), SIZE_MAX);
  std::vector<PathOp> ops;
  for (uint32_t i = 0; i < g.nodes.size(); ++i) {
    const GraphNode& n = g.nodes[i];
    size_t& at = index[g.name_of[i]];
    if (at == SIZE_MAX) {
      at = ops.size();
      ops.push_back({std::string(n.name), std::string(n.category), 0, 0, 0, slack[i]});
    }
    PathOp& op = ops[at];
    ++op.count;
    op.total_ps += n.duration_ps();
    op.on_path_ps += on_path[i];
    op.slack_ps = std::min(op.slack_ps, slack[i]);
  }
  std::stable_sort(ops.begin(), ops.end(), [](const PathOp& a, const PathOp& b) {
    return a.on_path_ps != b.on_path_ps ? a.on_path_ps > b.on_path_ps : a.total_ps > b.total_ps;
  });
  return ops;
}

std::vector<std::pair<std::string, int64_t>> by_category(const std::vector<PathSegment>& path) {
  // A handful of categories over up to hundreds of thousands of segments: a short list, searched
  // by the view's address first, then ordered by name as a map would.
  std::vector<std::pair<std::string_view, int64_t>> sums;
  for (const PathSegment& s : path) {
    auto it = std::find_if(sums.begin(), sums.end(), [&](const auto& c) {
      return c.first.data() == s.category.data() && c.first.size() == s.category.size();
    });
    if (it == sums.end())
      it = std::find_if(sums.begin(), sums.end(),
                        [&](const auto& c) { return c.first == s.category; });
    if (it == sums.end()) it = sums.insert(sums.end(), {s.category, 0});
    it->second += s.duration_ps;
  }
  std::sort(sums.begin(), sums.end());
  std::vector<std::pair<std::string, int64_t>> out;
  for (const auto& [c, t] : sums) out.emplace_back(std::string(c), t);
  std::stable_sort(out.begin(), out.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  return out;
}

// Per op name, its roofline time over its measured time (over every device), where the roofline
// knows its cost, finds it compute- or memory-bound (not latency, async or communication) and it
// runs slower than the roofline allows.
std::map<std::string, double> roofline_factors(const Profile& profile) {
  std::map<std::string, std::pair<double, double>> sums;  // predicted, measured
  for (const RooflineDevice& d : compute_roofline(profile, {}).devices)
    for (const RooflineOp& op : d.ops)
      if (op.figures.predicted_ps && op.figures.time_ps > 0 &&
          (op.figures.bound == Bound::kCompute || op.figures.bound == Bound::kMemory)) {
        auto& [predicted, measured] = sums[op.name];
        predicted += static_cast<double>(*op.figures.predicted_ps);
        measured += static_cast<double>(op.figures.time_ps);
      }
  std::map<std::string, double> out;
  for (const auto& [name, pm] : sums)
    if (pm.second > 0 && pm.first < pm.second) out[name] = pm.first / pm.second;
  return out;
}

struct Candidate {
  WhatIfSpec spec;
  std::string basis;
};

// The candidate changes ranked: the ops with most time on the path at their roofline time (at
// half their time where the roofline does not know it), each category and gap at half,
// collectives overlapped, launches free, each host at the median.
std::vector<Candidate> candidates(const CriticalPathResult& r,
                                  const std::vector<std::string>& host_names,
                                  const std::map<std::string, double>& roofline) {
  std::map<std::string, int64_t> op_time, categories;
  for (const CriticalStep& s : r.steps) {
    for (const PathOp& op : s.ops)
      if (op.category != "host") op_time[op.name] += op.on_path_ps;
    for (const auto& [c, t] : s.critical_ps) categories[c] += t;
  }
  std::vector<std::pair<std::string, int64_t>> ops(op_time.begin(), op_time.end());
  std::stable_sort(ops.begin(), ops.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  std::vector<Candidate> out;
  for (size_t i = 0; i < ops.size() && i < 10 && ops[i].second > 0; ++i) {
    auto it = roofline.find(ops[i].first);
    const bool known = it != roofline.end();
    out.push_back({parse_what_if(fmt::format("op=^{}$:{:.3g}", RE2::QuoteMeta(ops[i].first),
                                             known ? it->second : 0.5)),
                   known ? "roofline" : "half"});
  }
  for (const auto& [c, t] : categories)
    if (t > 0) out.push_back({parse_what_if("category=" + c + ":0.5"), "half"});
  out.push_back({parse_what_if("collectives=overlapped"), "overlapped"});
  out.push_back({parse_what_if("launches=free"), "free"});
  if (host_names.size() > 1)
    for (const std::string& h : host_names)
      if (h.find(':') == std::string::npos)
        out.push_back({parse_what_if("host=" + h + ":median"), "median"});
  return out;
}

// The candidates' changes over the counted steps, less those that cannot be among the `keep`
// that gain most: what each candidate can gain at most is known without a replay
// (what_if_gain_bound), so candidates replay from the largest bound down, a few at once on
// threads of their own, until the next bound is below the `keep`-th largest gain so far. The
// result is in candidate order, the same as if every one had replayed once ranked and cut.
template <typename Change>
std::vector<WhatIfChange> rank_candidates(const std::vector<Candidate>& cs,
                                          const std::vector<StepGraph>& graphs,
                                          const std::vector<size_t>& counted,
                                          const std::vector<std::string>& host_names, size_t keep,
                                          Change&& change) {
  constexpr double kNoBound = std::numeric_limits<double>::infinity();
  std::vector<double> bound(cs.size(), 0);  // the mean over the counted steps
  uint64_t edges = 0;
  for (size_t i : counted) edges += graphs[i].edges.size();
  std::vector<std::vector<uint32_t>> paths(graphs.size());
  for (size_t i : counted) paths[i] = binding_path(graphs[i]);
  for (size_t k = 0; k < cs.size(); ++k)
    for (size_t i : counted) {
      const std::optional<int64_t> b =
          what_if_gain_bound(graphs[i], paths[i], {cs[k].spec}, host_names);
      if (!b) {
        bound[k] = kNoBound;
        break;
      }
      bound[k] += static_cast<double>(*b) / static_cast<double>(counted.size());
    }
  std::vector<size_t> todo(cs.size());
  std::iota(todo.begin(), todo.end(), size_t{0});
  std::stable_sort(todo.begin(), todo.end(),
                   [&](size_t a, size_t b) { return bound[a] > bound[b]; });
  const size_t threads = parts_for(edges * cs.size(), uint64_t{4} << 20);
  std::vector<std::optional<WhatIfChange>> done(cs.size());
  std::vector<double> gains;                           // of those replayed, largest first
  std::vector<std::vector<int64_t>> scratch(threads);  // per thread: its replays' vertex times
  for (size_t next = 0; keep > 0 && next < todo.size();) {
    // (A margin for the rounding of means: a candidate that may tie still replays.)
    if (gains.size() >= keep && bound[todo[next]] * (1 + 1e-9) + 1 < gains[keep - 1]) break;
    const size_t wave = std::min(threads, todo.size() - next);
    for_each_parallel(std::vector<uint64_t>(wave, 1), threads, [&](size_t w, size_t thread) {
      const size_t k = todo[next + w];
      WhatIfChange c = change(cs[k].spec, [&](size_t i) {
        return replay_what_if(graphs[i], {cs[k].spec}, host_names, &scratch[thread]) -
               graphs[i].start_ps;
      });
      c.basis = cs[k].basis;
      done[k] = std::move(c);
    });
    for (size_t w = 0; w < wave; ++w) gains.push_back(-done[todo[next + w]]->change_ps);
    std::sort(gains.begin(), gains.end(), std::greater<>());
    next += wave;
  }
  std::vector<WhatIfChange> out;
  for (std::optional<WhatIfChange>& c : done)
    if (c) out.push_back(std::move(*c));
  return out;
}

}  // namespace

namespace {

// follow_step over the step's work, gathered already.
CriticalStep follow_work(const Profile& profile, const ProfileWork& all, size_t index,
                         const CriticalPathOptions& options, StepGraph* graph, StepWork work) {
  std::vector<std::string> host_names;
  for (const Host& h : profile.hosts) host_names.push_back(h.name);
  const Step& step = all.steps[index];
  StepGraph g = build_step_graph(std::move(work));
  CriticalStep s;
  s.number = step.number;
  s.name = step.name;
  // The host that marks it; "" when several do.
  s.host =
      all.parts[index].size() == 1 && step.host < host_names.size() ? host_names[step.host] : "";
  s.start_ps = step.start_ps;
  s.step_ps = g.time_ps[g.end_vertex()] - step.start_ps;
  s.marked_ps = step.end_ps - step.start_ps;
  s.warmup = step.warmup;
  s.nodes = g.nodes.size();
  // Those that bind as measured.
  s.edges = g.edges.size() - g.span_tails.size() - g.outside_edges;
  std::vector<int64_t> on_path;
  s.path = walk_path(g, profile.hosts, step.host, on_path);
  s.critical_ps = by_category(s.path);
  s.ops = step_ops(g, on_path, node_slack(g));
  s.ops_total = s.ops.size();
  s.collectives = held_collectives(g, host_names, &s.collectives_partial);
  for (const WhatIfSpec& spec : options.what_ifs)
    s.predictions.push_back({spec.text, replay_what_if(g, {spec}, host_names) - step.start_ps});
  if (!options.what_ifs.empty())
    s.predicted_all_ps = replay_what_if(g, options.what_ifs, host_names) - step.start_ps;
  if (graph) *graph = std::move(g);
  return s;
}

}  // namespace

CriticalStep follow_step(const Profile& profile, const ProfileWork& all, size_t index,
                         const CriticalPathOptions& options, StepGraph* graph) {
  return follow_work(profile, all, index, options, graph, step_work(profile, all, index));
}

CriticalPathResult compute_critical_path(const Profile& profile,
                                         const CriticalPathOptions& options) {
  CriticalPathResult r;
  ProfileWork all = gather_profile_work(profile);
  r.step_source = all.source;
  r.assumptions.assign(std::begin(kAssumptions), std::end(kAssumptions));
  r.warnings = all.warnings;
  std::vector<std::string> host_names;
  for (const Host& h : profile.hosts) host_names.push_back(h.name);
  std::vector<StepGraph> graphs(all.steps.size());
  CriticalPathOptions one_step = options;
  one_step.what_ifs.clear();  // replayed below, once every step's graph is known
  for (size_t i = 0; i < all.steps.size(); ++i) {
    // One step (a profile that marks none) takes the nodes: no second copy of them.
    StepWork work =
        all.steps.size() == 1 ? take_step_work(profile, all, i) : step_work(profile, all, i);
    r.steps.push_back(follow_work(profile, all, i, one_step, &graphs[i], std::move(work)));
    if (graphs[i].cyclic)
      r.warnings.push_back(fmt::format(
          "step {}: its dependencies form a cycle (collective executions matched into instances "
          "in different orders on different devices); the path follows the measured times "
          "through it, and what-if predictions for the step are approximate",
          r.steps.back().number));
  }
  // Figures over the steady steps (all steps when every one is warm-up).
  std::vector<size_t> counted;
  for (size_t i = 0; i < r.steps.size(); ++i)
    if (!r.steps[i].warmup) counted.push_back(i);
  if (counted.empty())
    for (size_t i = 0; i < r.steps.size(); ++i) counted.push_back(i);
  std::vector<const StepGraph*> steady;
  for (size_t i : counted) steady.push_back(&graphs[i]);
  std::vector<WhatIfSpec> what_ifs = options.what_ifs;
  set_host_ratios(what_ifs, steady, host_names);
  std::vector<int64_t> scratch;
  for (size_t i = 0; i < r.steps.size() && !what_ifs.empty(); ++i) {
    for (const WhatIfSpec& spec : what_ifs)
      r.steps[i].predictions.push_back(
          {spec.text,
           replay_what_if(graphs[i], {spec}, host_names, &scratch) - graphs[i].start_ps});
    r.steps[i].predicted_all_ps =
        replay_what_if(graphs[i], what_ifs, host_names, &scratch) - graphs[i].start_ps;
  }
  double measured = 0;
  for (size_t i : counted) measured += static_cast<double>(r.steps[i].step_ps);
  if (!counted.empty()) measured /= static_cast<double>(counted.size());
  auto change = [&](const WhatIfSpec& spec, auto predicted_of) {
    double p = 0;
    for (size_t i : counted) p += static_cast<double>(predicted_of(i));
    if (!counted.empty()) p /= static_cast<double>(counted.size());
    return WhatIfChange{spec.text, p, measured, p - measured};
  };
  for (size_t k = 0; k < options.what_ifs.size(); ++k)
    r.what_ifs.push_back(change(options.what_ifs[k],
                                [&](size_t i) { return r.steps[i].predictions[k].predicted_ps; }));
  if (options.what_ifs.size() > 1) {
    WhatIfSpec all;
    for (const WhatIfSpec& spec : options.what_ifs)
      all.text += (all.text.empty() ? "" : " + ") + spec.text;
    r.combined.push_back(change(all, [&](size_t i) { return r.steps[i].predicted_all_ps; }));
  }
  if (options.rank && !counted.empty()) {
    std::vector<Candidate> cs = candidates(r, host_names, roofline_factors(profile));
    std::vector<WhatIfSpec> specs;
    for (const Candidate& c : cs) specs.push_back(c.spec);
    set_host_ratios(specs, steady, host_names);
    for (size_t k = 0; k < cs.size(); ++k) cs[k].spec = std::move(specs[k]);
    r.ranked = rank_candidates(cs, graphs, counted, host_names, options.ranked, change);
    std::stable_sort(
        r.ranked.begin(), r.ranked.end(),
        [](const WhatIfChange& a, const WhatIfChange& b) { return a.change_ps < b.change_ps; });
    if (r.ranked.size() > options.ranked) r.ranked.resize(options.ranked);
  }
  if (options.top_ops)
    for (CriticalStep& s : r.steps)
      if (s.ops.size() > options.top_ops) s.ops.resize(options.top_ops);
  return r;
}

}  // namespace jaxprof
