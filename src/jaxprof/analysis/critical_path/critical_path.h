// What sets each step's time: the chain of device ops, collectives, host work and gaps that ends
// last (the critical path), each op's time on it and its slack (how much later it could have
// ended without delaying the step), and what-if replays of the step's graph (step_graph.h,
// what_if.h). docs/critical-path.md.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "jaxprof/analysis/critical_path/held_collectives.h"
#include "jaxprof/analysis/critical_path/what_if.h"
#include "jaxprof/model/profile.h"

namespace jaxprof {

struct CriticalPathOptions {
  std::vector<WhatIfSpec> what_ifs;
  size_t top_ops = 0;  // per step, the ops with most time on the path (0 = every op)
  bool rank = true;    // rank candidate changes by the time they would gain
  size_t ranked = 5;   // how many to keep
};

// One stretch of the path: an event of the profile (an op, a collective's transfer after the last
// arrival, a host event) or a named gap ("device/idle", "host/launch", "host/idle",
// "host/step-start", "host/step-end").
// Its names are views of the Profile's strings and of static names (a step's path may hold
// hundreds of thousands of segments): a result lives no longer than the Profile it came from.
struct PathSegment {
  std::string_view host;  // Profile::hosts' name
  std::string device;     // "" for host work and host gaps
  std::string_view name;
  std::string_view kind;      // "op", "collective", "host", "gap"
  std::string_view category;  // op category, "host", or the gap's: device-idle, launch, host-idle
  int64_t start_ps = 0, duration_ps = 0;
};

// One op name (or host event name) of a step, over its devices.
struct PathOp {
  std::string name, category;
  uint64_t count = 0;    // its events in the step
  int64_t total_ps = 0;  // their durations
  int64_t on_path_ps = 0;
  int64_t slack_ps = 0;  // the least slack of its events
};

struct WhatIfPrediction {
  std::string spec;
  int64_t predicted_ps = 0;  // the step's predicted time
};

struct CriticalStep {
  int64_t number = 0;
  std::string name;
  std::string host;
  int64_t start_ps = 0;
  int64_t step_ps = 0;    // from its start to its last work or its end, whichever is later
  int64_t marked_ps = 0;  // from its start to its end, as the profile marks it
  bool warmup = false;
  uint64_t nodes = 0, edges = 0;
  std::vector<std::pair<std::string, int64_t>> critical_ps;  // by category, largest first
  std::vector<PathSegment> path;                             // by start
  std::vector<PathOp> ops;                                   // by on_path_ps, then total
  size_t ops_total = 0;
  std::vector<HeldCollective> collectives;    // by last arrival
  size_t collectives_partial = 0;             // instances only partly in the step
  std::vector<WhatIfPrediction> predictions;  // one per option what-if, in order
  int64_t predicted_all_ps = 0;               // every option what-if at once
};

// A change over all steps (the steady ones when there are any): the mean predicted step time.
struct WhatIfChange {
  std::string spec;
  double predicted_step_ps = 0;
  double measured_step_ps = 0;
  double change_ps = 0;  // predicted - measured (negative: faster)
  // Ranked candidates: what the change stands for: "roofline" (an op at its roofline time),
  // "half" (at half its time), "overlapped", "free", "median".
  std::string basis;
};

struct CriticalPathResult {
  std::string step_source;  // as steps.h says, or "profile" (no steps marked: one window)
  std::vector<std::string> assumptions;
  std::vector<CriticalStep> steps;
  std::vector<WhatIfChange> what_ifs;  // the options' what-ifs, one at a time
  std::vector<WhatIfChange> combined;  // all of them at once (empty without what-ifs)
  std::vector<WhatIfChange> ranked;    // the candidates that gain most, most first
  std::vector<std::string> warnings;
};

CriticalPathResult compute_critical_path(const Profile& profile,
                                         const CriticalPathOptions& options);

struct ProfileWork;
// One step of compute_critical_path (its what-ifs, not the ranking): step `index` of `all`
// (gather_profile_work, step_work.h). `graph`, if given, receives the step's graph. Its
// host=NAME:median takes this step's compute alone unless the spec's ratio is set
// (set_host_ratios); compute_critical_path sets it from the steady steps.
CriticalStep follow_step(const Profile& profile, const ProfileWork& all, size_t index,
                         const CriticalPathOptions& options, StepGraph* graph = nullptr);

}  // namespace jaxprof
