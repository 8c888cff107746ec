// Training or serving steps as the profile marks them, and what the devices did in each: per
// step its span, the module executions that started in it and their device time. A step during
// which its host compiled, or that holds a warm-up execution (the first of a program after its
// compile, module_executions.h), is reported apart.
//
// Steps come from the first of these sources that marks any (docs/modules.md, Steps):
// StepTraceAnnotation events on the host, "Steps" lines on device planes, group_id stats on
// device events.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "jaxprof/model/profile.h"

namespace jaxprof {

struct StepModule {
  std::string name;
  ProgramId program_id = kNoProgram;
  uint64_t executions = 0;  // over all devices
  int64_t device_ps = 0;    // sum of those executions' durations
};

struct Step {
  int64_t number = 0;  // the annotation's step_num; a device step's group_id (see steps.cc)
  std::string name;    // the annotation's name ("train"); a Steps event's step_name or name
  int64_t start_ps = 0, end_ps = 0;  // over all its windows
  // The spans it was merged from: one host annotation, or one per device that marks the step
  // (device sources), and the longest of them (devices need not run a step at the same time).
  uint32_t windows = 1;
  int64_t longest_window_ps = 0;
  uint64_t executions = 0;          // module executions (all devices) that start in [start, end)
  int64_t device_ps = 0;            // sum of their durations
  int64_t device_end_ps = 0;        // latest end of those executions (0 when none)
  bool compiling = false;           // its host compiled during it (a compile overlaps its span)
  bool warmup = false;              // compiling, or holds a warm-up execution of some device
  std::vector<StepModule> modules;  // by device_ps descending
  uint32_t host = 0;                // the host that marks it (index into the hosts, in order)
  int64_t duration_ps() const { return end_ps - start_ps; }
};

struct StepsResult {
  std::string source = "none";  // or "host-annotation", "steps-line", "group-id"
  std::vector<Step> steps;      // by start
  // Over the steps that are not warm-up (all steps when every one is).
  uint64_t steady_steps = 0;
  double steady_mean_ps = 0;         // mean step duration
  double steady_device_mean_ps = 0;  // mean device time per step
};

StepsResult compute_steps(const Profile& profile);

// For each step (in order), how many steps of its host with its number and name came before it.
// Several hosts' marks of one step are those with the same (number, name, occurrence): a host
// that counts from 0 again has its k-th mark of a number joined with the other hosts' k-th.
std::vector<uint32_t> step_occurrences(const std::vector<Step>& steps);

class PartialSet;
// `modules`: fill each Step's modules (per step and module, a name and sums: about 500 bytes a
// step, 25 MB for the 48,000 steps of 1,000 hosts); diff and check do without them.
StepsResult steps_from_partials(const PartialSet& set, bool modules = true);

}  // namespace jaxprof
