// The work of each step as the profile shows it, for the step graphs: device ops (top-level on
// their lane) that start in the step, which collective instance each takes part in (matched
// across devices and hosts by analysis/collectives), and the host events directly under the
// step's own annotation (when the host marks the steps).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "jaxprof/analysis/critical_path/step_graph.h"
#include "jaxprof/analysis/steps/steps.h"
#include "jaxprof/model/profile.h"

namespace jaxprof {

// Everything the steps share, gathered once.
struct ProfileWork {
  // The steps of compute_steps; those several hosts mark (one StepTraceAnnotation per host, of
  // the same number and name) are one step from the first start to the last end. One window of
  // all device work when the profile marks none.
  std::vector<Step> steps;
  std::vector<std::vector<Step>> parts;  // per step, each host's own (one when one host marks it)
  std::string source;
  std::vector<std::string> devices, lanes;
  std::vector<GraphNode> device_nodes;  // by start
  std::vector<uint32_t> instance;       // per device node (UINT32_MAX: none), global ids
  std::vector<uint8_t> execution_start;
  std::vector<std::string> warnings;
  // Per collective instance (global id): its participants in the whole profile, so that a step
  // that holds only some of them (merged steps of several hosts overlap) can tell.
  std::vector<uint32_t> instance_members;
  // Per instance, its device nodes (indices into device_nodes, by start): those of instance k
  // are member_nodes[member_first[k], member_first[k + 1]).
  std::vector<uint32_t> member_first, member_nodes;
};

ProfileWork gather_profile_work(const Profile& profile);
// The same from the profile's steps, computed already (compute_steps).
ProfileWork gather_profile_work(const Profile& profile, StepsResult steps);

// The work of step `index`: its device nodes, and the host events under each host's annotation
// of it when the hosts mark it.
StepWork step_work(const Profile& profile, const ProfileWork& all, size_t index);
// The same, the step's device nodes moved out of `all` where the step holds every one (a profile
// that marks no steps): for the last use of `all`'s nodes.
StepWork take_step_work(const Profile& profile, ProfileWork& all, size_t index);

}  // namespace jaxprof
