// Which participant held each collective instance of a step: the one that arrived last, since an
// instance ends for every participant a fixed time after its last arrival (step_graph.h). With
// several hosts this names the host (and the work on it) that the others waited for.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "jaxprof/analysis/critical_path/step_graph.h"

namespace jaxprof {

struct HeldCollective {
  std::string name;           // the collective op (as its last participant names it)
  uint32_t participants = 0;  // its events in the step, one per device
  uint32_t hosts = 0;         // the distinct hosts among them
  std::string host, device;   // the last to arrive
  // What the last participant waited for before it could start: the node whose end (or start,
  // for a launching host event) bound its start ("" when nothing in the step did).
  std::string after;
  std::string after_kind;  // "op", "collective", "host", "launch" (a GPU kernel's launch), ""
  int64_t arrival_ps = 0;  // the last arrival
  int64_t spread_ps = 0;   // last arrival - first arrival: how long the first participant waited
};

// The instances of `g` with more than one participant, all of them in the step, by last arrival.
// An instance only partly in the step (merged steps of several hosts overlap, and a participant
// that started in another step's window is that step's) is left out, as its last arrival is not
// known here; `partial` counts them. `host_names`: Profile::hosts' names.
std::vector<HeldCollective> held_collectives(const StepGraph& g,
                                             const std::vector<std::string>& host_names,
                                             size_t* partial = nullptr);

}  // namespace jaxprof
