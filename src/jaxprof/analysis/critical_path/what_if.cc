#include "jaxprof/analysis/critical_path/what_if.h"

#include <re2/re2.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>
#include <string_view>
#include <unordered_map>

#include "jaxprof/analysis/stats/significance.h"
#include "jaxprof/common/error.h"

namespace jaxprof {

namespace {

constexpr const char* kSpecHelp =
    "expected op=PATTERN:FACTOR, category=NAME:FACTOR, host=NAME:median, "
    "collectives=overlapped or launches=free";

InputError bad_spec(const std::string& text, const std::string& why) {
  return InputError("", "--what-if '" + text + "': " + why + " (" + kSpecHelp + ")");
}

double parse_factor(const std::string& text, const std::string& value) {
  try {
    size_t used = 0;
    const double f = std::stod(value, &used);
    if (used == value.size() && std::isfinite(f) && f >= 0) return f;
  } catch (const std::exception&) {
  }
  throw bad_spec(text, "FACTOR must be a number >= 0");
}

bool is_gap_category(const std::string& c) {
  return c == "device-idle" || c == "launch" || c == "host-idle";
}

int64_t scaled(int64_t w, double f) {
  return static_cast<int64_t>(std::llround(static_cast<double>(w) * f));
}

// Each host's device compute (ops that are not collectives) by op name, over several steps: its
// time and count per name.
struct HostCompute {
  std::vector<std::string_view> names;  // the names seen, in order
  std::unordered_map<std::string_view, uint32_t> index;
  std::vector<std::vector<std::pair<int64_t, uint32_t>>> by_host;  // [host][name]: time, count

  void add(const StepGraph& g) {
    std::vector<uint32_t> ids(g.names.size());
    for (size_t k = 0; k < g.names.size(); ++k) {
      auto [it, added] = index.try_emplace(g.names[k], static_cast<uint32_t>(names.size()));
      if (added) names.push_back(g.names[k]);
      ids[k] = it->second;
    }
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      const GraphNode& n = g.nodes[i];
      if (n.kind != NodeKind::kOp || n.host >= by_host.size()) continue;
      auto& row = by_host[n.host];
      if (row.size() < names.size()) row.resize(names.size());
      auto& [time, count] = row[ids[g.name_of[i]]];
      time += n.duration_ps();
      ++count;
    }
  }

  // The median host's speed over host `x`'s: each host's time for x's ops (its mean per op name,
  // over the names both ran, times x's count) over x's own, the median of these. A step's window
  // holds more or fewer ops of one host than of another, so the hosts' sums alone misjudge it.
  double median_ratio(size_t x) const {
    const auto& own = by_host[x];
    std::vector<double> ratios;
    for (const auto& row : by_host) {
      double theirs = 0, mine = 0;
      for (size_t k = 0; k < own.size() && k < row.size(); ++k)
        if (own[k].second > 0 && row[k].second > 0 && own[k].first > 0) {
          theirs += static_cast<double>(row[k].first) / row[k].second * own[k].second;
          mine += static_cast<double>(own[k].first);
        }
      if (mine > 0) ratios.push_back(theirs / mine);
    }
    return ratios.empty() ? 1 : median(std::move(ratios));
  }
};

// The median host's speed over host `target`'s (HostCompute::median_ratio); 1 when no host is so
// named or it has no device compute.
double host_ratio(const HostCompute& compute, const std::string& target,
                  const std::vector<std::string>& host_names) {
  const auto it = std::find(host_names.begin(), host_names.end(), target);
  return it == host_names.end()
             ? 1
             : compute.median_ratio(static_cast<size_t>(it - host_names.begin()));
}

// host=NAME:median: the host's speed set to the median host's. The median host's time for the
// host's device compute (ops that are not collectives: a collective's time is mostly waiting for
// the others) over the host's own, over the steps set_host_ratios saw, else in this step; the
// host's own work and the gaps on its lanes and thread take it, while its collectives keep their
// transfer after the last arrival (when the host arrives sooner, the barrier moves with it).
double host_median_ratio(const StepGraph& g, const WhatIfSpec& spec,
                         const std::vector<std::string>& host_names) {
  if (spec.ratio > 0) return spec.ratio;
  HostCompute compute;
  compute.by_host.resize(host_names.size());
  compute.add(g);
  return host_ratio(compute, spec.target, host_names);
}

// The factor each node's own time takes under `spec`.
std::vector<double> node_factors(const StepGraph& g, const WhatIfSpec& spec) {
  std::vector<double> f(g.nodes.size(), 1.0);
  if (spec.kind == WhatIfSpec::Kind::kOp) {
    std::vector<uint8_t> matches(g.names.size());
    for (size_t k = 0; k < g.names.size(); ++k)
      matches[k] = RE2::PartialMatch(g.names[k], *spec.pattern);
    for (size_t i = 0; i < g.nodes.size(); ++i)
      if (matches[g.name_of[i]]) f[i] = spec.factor;
  } else if (spec.kind == WhatIfSpec::Kind::kCategory) {
    const auto it = std::find(g.categories.begin(), g.categories.end(), spec.target);
    if (it == g.categories.end()) return f;
    const uint32_t target = static_cast<uint32_t>(it - g.categories.begin());
    for (size_t i = 0; i < g.nodes.size(); ++i)
      if (g.category_of[i] == target) f[i] = spec.factor;
  }
  return f;
}

}  // namespace

WhatIfSpec parse_what_if(const std::string& text) {
  WhatIfSpec s;
  s.text = text;
  const size_t eq = text.find('=');
  if (eq == std::string::npos) throw bad_spec(text, "no '='");
  const std::string key = text.substr(0, eq), value = text.substr(eq + 1);
  if (key == "collectives") {
    if (value != "overlapped") throw bad_spec(text, "collectives takes 'overlapped'");
    s.kind = WhatIfSpec::Kind::kCollectivesOverlapped;
    return s;
  }
  if (key == "launches") {
    if (value != "free") throw bad_spec(text, "launches takes 'free'");
    s.kind = WhatIfSpec::Kind::kLaunchesFree;
    return s;
  }
  const size_t colon = value.rfind(':');
  if (colon == std::string::npos || colon == 0) throw bad_spec(text, "no ':' after the name");
  s.target = value.substr(0, colon);
  const std::string amount = value.substr(colon + 1);
  if (key == "host") {
    if (amount != "median") throw bad_spec(text, "host takes NAME:median");
    s.kind = WhatIfSpec::Kind::kHostMedian;
    return s;
  }
  s.factor = parse_factor(text, amount);
  if (key == "op") {
    s.kind = WhatIfSpec::Kind::kOp;
    RE2::Options opts;
    opts.set_log_errors(false);
    auto re = std::make_shared<RE2>(s.target, opts);
    if (!re->ok()) throw bad_spec(text, "invalid regular expression: " + re->error());
    s.pattern = std::move(re);
    return s;
  }
  if (key == "category") {
    if (s.target == "elementwise") s.target = "elementwise/fusion";
    static const char* kKnown[] = {"gemm",        "convolution", "attention", "elementwise/fusion",
                                   "collective",  "memcpy",      "other",     "host",
                                   "device-idle", "launch",      "host-idle"};
    if (std::find(std::begin(kKnown), std::end(kKnown), s.target) == std::end(kKnown))
      throw bad_spec(text, "unknown category '" + s.target +
                               "' (gemm, convolution, attention, elementwise/fusion, collective, "
                               "memcpy, "
                               "other, host, device-idle, launch, host-idle)");
    s.kind = WhatIfSpec::Kind::kCategory;
    return s;
  }
  throw bad_spec(text, "unknown key '" + key + "'");
}

void set_host_ratios(std::vector<WhatIfSpec>& specs, const std::vector<const StepGraph*>& steps,
                     const std::vector<std::string>& host_names) {
  bool any = false;
  for (const WhatIfSpec& spec : specs) any |= spec.kind == WhatIfSpec::Kind::kHostMedian;
  if (!any) return;
  HostCompute compute;
  compute.by_host.resize(host_names.size());
  for (const StepGraph* g : steps) compute.add(*g);
  for (WhatIfSpec& spec : specs)
    if (spec.kind == WhatIfSpec::Kind::kHostMedian)
      spec.ratio = host_ratio(compute, spec.target, host_names);
}

const char* gap_category(EdgeKind kind) {
  switch (kind) {
    case EdgeKind::kDeviceGap:
      return "device-idle";
    case EdgeKind::kLaunchGap:
      return "launch";
    case EdgeKind::kHostGap:
    case EdgeKind::kStepEndGap:
      return "host-idle";
    default:
      return "";
  }
}

namespace {

// Each edge's weight under a set of specs.
class WhatIfWeights {
 public:
  WhatIfWeights(const StepGraph& g, const std::vector<WhatIfSpec>& specs,
                const std::vector<std::string>& host_names)
      : g_(g) {
    if (!g.span_tails.empty()) {
      span_tail_.assign(g.nodes.size(), kNoSpan);
      for (const auto& [node, tail] : g.span_tails) span_tail_[node] = tail;
    }
    // Specs together: node factors multiply, gap factors multiply per gap kind (an array by
    // EdgeKind: the ranking replays once per candidate, with no lookup by name per edge).
    std::fill(std::begin(gap_factor_), std::end(gap_factor_), 1.0);
    if (!by_name_or_category(specs))
      for (const WhatIfSpec& spec : specs) {
        if (spec.kind == WhatIfSpec::Kind::kOp || spec.kind == WhatIfSpec::Kind::kCategory) {
          if (factor_.empty()) factor_.assign(g.nodes.size(), 1.0);
          const std::vector<double> f = node_factors(g, spec);
          for (size_t i = 0; i < f.size(); ++i) factor_[i] *= f[i];
        } else if (spec.kind == WhatIfSpec::Kind::kHostMedian) {
          const double r = host_median_ratio(g, spec, host_names);
          if (r != 1.0) {
            if (factor_.empty()) factor_.assign(g.nodes.size(), 1.0);
            if (gap_node_factor_.empty()) gap_node_factor_.assign(g.nodes.size(), 1.0);
            for (size_t i = 0; i < g.nodes.size(); ++i) {
              const GraphNode& n = g.nodes[i];
              if (n.host >= host_names.size() || host_names[n.host] != spec.target) continue;
              if (n.kind != NodeKind::kCollective) factor_[i] *= r;
              gap_node_factor_[i] *= r;
            }
          }
        }
      }
    for (const WhatIfSpec& spec : specs) {
      overlapped_ |= spec.kind == WhatIfSpec::Kind::kCollectivesOverlapped;
      launches_free_ |= spec.kind == WhatIfSpec::Kind::kLaunchesFree;
      if (spec.kind == WhatIfSpec::Kind::kCategory && is_gap_category(spec.target))
        for (size_t k = 0; k < std::size(gap_factor_); ++k)
          if (spec.target == gap_category(static_cast<EdgeKind>(k))) gap_factor_[k] *= spec.factor;
    }
  }

  // A source's time: as measured, but a source of a host at the median (its first work in the
  // step) comes after the step's start by that much less, as a gap on its thread does.
  int64_t source(uint32_t v) const {
    const int64_t t = g_.time_ps[v];
    const size_t node = v / 2;
    if (gap_node_factor_.empty() || node >= gap_node_factor_.size() || t <= g_.start_ps) return t;
    return g_.start_ps + by(t - g_.start_ps, gap_node_factor_[node]);
  }

  // Whether the weights only scale (no edge appears or goes).
  bool scales_only() const { return !overlapped_ && !launches_free_; }

  // The factor of node `i`'s own time: the product, in the specs' order, of theirs.
  double factor(uint32_t i) const {
    if (!factor_.empty()) return factor_[i];
    if (!name_factor_.empty()) return name_factor_[g_.name_of[i]];
    if (!category_factor_.empty()) return category_factor_[g_.category_of[i]];
    return 1.0;
  }

  int64_t operator()(const GraphEdge& e) const {
    switch (e.kind) {
      case EdgeKind::kDuration:
        if (e.weight_ps == kAbsentEdge) return overlapped_ ? 0 : kAbsentEdge;
        // A host event that waits for a device op within it: its tail after its start.
        if (!span_tail_.empty() && span_tail_[e.node] != kNoSpan)
          return by(span_tail_[e.node], factor(e.node));
        return by(e.weight_ps, factor(e.node));
      case EdgeKind::kHostSpan:
        return by(e.weight_ps, factor(e.node));
      case EdgeKind::kTail: {
        if (overlapped_ && g_.nodes[e.node].kind == NodeKind::kCollective) return kAbsentEdge;
        // A collective's transfer runs from its last arrival, in the step or after it, on the
        // hosts' common clock; each participant's end is on its own.
        const size_t barrier = e.from - 2 * g_.nodes.size();
        const int64_t w = e.from >= 2 * g_.nodes.size() && barrier < g_.replay_lag.size()
                              ? e.weight_ps - g_.replay_lag[barrier]
                              : e.weight_ps;
        return w > 0 ? by(w, factor(e.node)) : w;
      }
      case EdgeKind::kOutside: {
        // The lane's time until it arrives: the host's, at the median host's speed or its own.
        if (overlapped_) return kAbsentEdge;
        const int64_t w = gap_node_factor_.empty() || e.weight_ps <= 0
                              ? e.weight_ps
                              : by(e.weight_ps, gap_node_factor_[e.node]);
        return w - g_.offset_of(g_.nodes[e.node].host);
      }
      case EdgeKind::kDeviceGap:
      case EdgeKind::kLaunchGap:
        // Free launches: a kernel waits for no launch (at the earliest, the step's start).
        if (launches_free_ && g_.is_launch(e.from)) return g_.start_ps - g_.time_ps[e.from];
        return launches_free_ ? std::min<int64_t>(e.weight_ps, 0) : gap(e);
      case EdgeKind::kHostGap:
      case EdgeKind::kStepEndGap:
        return gap(e);
      case EdgeKind::kZero:
        // An arrival at a collective, on the hosts' common clock.
        return g_.host_offset.empty() || e.node >= g_.nodes.size()
                   ? e.weight_ps
                   : e.weight_ps - g_.offset_of(g_.nodes[e.node].host);
    }
    return e.weight_ps;
  }

 private:
  static int64_t by(int64_t w, double f) { return f == 1.0 ? w : scaled(w, f); }

  // Where every spec that scales nodes is an op pattern, or every one a category, a node's
  // factor follows from its name (or category) alone: a factor per name, not per node (the
  // ranking weighs a dozen candidates over graphs of up to millions of nodes). False where
  // factors are needed per node (a host at the median, op patterns and categories together).
  bool by_name_or_category(const std::vector<WhatIfSpec>& specs) {
    bool ops = false, categories = false;
    for (const WhatIfSpec& spec : specs) {
      if (spec.kind == WhatIfSpec::Kind::kHostMedian) return false;
      ops |= spec.kind == WhatIfSpec::Kind::kOp;
      categories |= spec.kind == WhatIfSpec::Kind::kCategory;
    }
    if (ops && categories) return false;
    for (const WhatIfSpec& spec : specs)
      if (spec.kind == WhatIfSpec::Kind::kOp) {
        if (name_factor_.empty()) name_factor_.assign(g_.names.size(), 1.0);
        for (size_t k = 0; k < g_.names.size(); ++k)
          if (RE2::PartialMatch(g_.names[k], *spec.pattern)) name_factor_[k] *= spec.factor;
      } else if (spec.kind == WhatIfSpec::Kind::kCategory) {
        const auto it = std::find(g_.categories.begin(), g_.categories.end(), spec.target);
        if (it == g_.categories.end()) continue;
        if (category_factor_.empty()) category_factor_.assign(g_.categories.size(), 1.0);
        category_factor_[static_cast<size_t>(it - g_.categories.begin())] *= spec.factor;
      }
    return true;
  }
  int64_t gap(const GraphEdge& e) const {
    if (e.weight_ps <= 0) return e.weight_ps;
    double f = gap_factor_[static_cast<size_t>(e.kind)];
    if (!gap_node_factor_.empty() && e.node < gap_node_factor_.size())
      f *= gap_node_factor_[e.node];
    return by(e.weight_ps, f);
  }

  const StepGraph& g_;
  std::vector<double> factor_;  // per node, where its factor is not by name or category alone
  std::vector<double> name_factor_, category_factor_;
  std::vector<double> gap_node_factor_;  // per node, for the gap before it (host=NAME:median)
  std::vector<int64_t> span_tail_;       // per node: its tail (kHostSpan), or kNoSpan
  static constexpr int64_t kNoSpan = INT64_MIN;
  double gap_factor_[static_cast<size_t>(EdgeKind::kOutside) + 1];
  bool overlapped_ = false, launches_free_ = false;
};

}  // namespace

int64_t replay_what_if(const StepGraph& g, const std::vector<WhatIfSpec>& specs,
                       const std::vector<std::string>& host_names, std::vector<int64_t>* scratch) {
  const WhatIfWeights weight(g, specs, host_names);
  std::vector<int64_t> own;
  std::vector<int64_t>& t = scratch ? *scratch : own;
  replay(g, weight, t);
  return t[g.end_vertex()];
}

std::optional<int64_t> what_if_gain_bound(const StepGraph& g, const std::vector<uint32_t>& path,
                                          const std::vector<WhatIfSpec>& specs,
                                          const std::vector<std::string>& host_names) {
  const WhatIfWeights weight(g, specs, host_names);
  if (!weight.scales_only() || g.cyclic) return std::nullopt;
  // The measured path runs from a source whose time stays to the step's end, and is still a
  // path of the changed graph: the replay's end is at least its changed length, so the step
  // gains at most what the path's edges lose.
  int64_t lost = 0;
  // The path's first vertex, a source, may move earlier (a host at the median).
  const uint32_t first = path.empty() ? g.end_vertex() : g.edges[path.back()].from;
  if (g.first_in[first] == g.first_in[first + 1])
    lost = std::max<int64_t>(0, g.time_ps[first] - weight.source(first));
  for (uint32_t i : path) {
    const GraphEdge& edge = g.edges[i];
    lost = std::min(lost + std::max<int64_t>(0, edge.weight_ps - weight(edge)), INT64_MAX / 4);
  }
  return lost;
}

}  // namespace jaxprof
