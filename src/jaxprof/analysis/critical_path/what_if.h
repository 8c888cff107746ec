// What-if replay: change durations in a step's graph and replay it to predict the step time.
//   op=PATTERN:FACTOR        every node whose name matches the RE2 pattern (anywhere) takes FACTOR
//                            times its time (a collective: its transfer after the last arrival;
//                            the participants still meet)
//   category=NAME:FACTOR     the same for an op category (gemm, convolution, attention,
//                            elementwise/fusion, collective, memcpy, other), host events ("host"),
//                            or the gaps: device-idle, launch, host-idle
//   host=NAME:median         the host at the median host's speed: its ops (not collectives), host
//                            events, gaps and start in the step scaled by the median host's
//                            time for its device compute over its own (per op name)
//   collectives=overlapped   collectives cost nothing and hold no one (no barrier)
//   launches=free            no device op waits after its predecessor or its launch (device gaps 0)
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "jaxprof/analysis/critical_path/step_graph.h"
#include "jaxprof/model/profile.h"

namespace re2 {
class RE2;
}

namespace jaxprof {

struct WhatIfSpec {
  enum class Kind : uint8_t { kOp, kCategory, kHostMedian, kCollectivesOverlapped, kLaunchesFree };
  std::string text;  // as given
  Kind kind = Kind::kOp;
  std::string target;  // pattern, category or host name
  double factor = 1;
  std::shared_ptr<const re2::RE2> pattern;  // kOp
  // kHostMedian: the median host's time for the host's device compute over the host's own (each
  // host's mean per op name times the host's count), over the steps that set_host_ratios saw; 0
  // until then (each step's own compute gives it).
  double ratio = 0;
};

// Throws InputError naming what is wrong with `text`.
WhatIfSpec parse_what_if(const std::string& text);

// host=NAME:median from the device compute of several steps together (the steady ones), op name
// by op name: which ops a step's window holds varies from host to host, so sums misjudge the
// host's speed. Sets `ratio` on each such spec.
void set_host_ratios(std::vector<WhatIfSpec>& specs, const std::vector<const StepGraph*>& steps,
                     const std::vector<std::string>& host_names);

// The category name an edge's gap counts under on the path ("device-idle", "launch",
// "host-idle"), or "" for a node's own time.
const char* gap_category(EdgeKind kind);

// The step's end when every spec of `specs` holds at once. `host_names`: Profile::hosts' names,
// for host=NAME:median.
// `scratch`, if given, holds the vertex times (its memory reused from one replay to the next).
int64_t replay_what_if(const StepGraph& g, const std::vector<WhatIfSpec>& specs,
                       const std::vector<std::string>& host_names,
                       std::vector<int64_t>* scratch = nullptr);

// The most the specs can take off the step's end, without replaying: what the edges of the
// measured critical path (`path`, binding_path(g)) lose. That path is still a path after the
// change, so replay_what_if never predicts less than the measured end less this. nullopt where no
// such bound holds: specs that change the graph's shape (collectives overlapped, launches free)
// or a graph with a cycle.
std::optional<int64_t> what_if_gain_bound(const StepGraph& g, const std::vector<uint32_t>& path,
                                          const std::vector<WhatIfSpec>& specs,
                                          const std::vector<std::string>& host_names);

}  // namespace jaxprof
