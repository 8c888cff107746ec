// The one-screen answer: device time and idle share, top modules, top ops with their source
// lines, collectives' exposed time and bandwidth, compile time, and the few observations most
// worth acting on. Built from the other analyses (timeline, modules, ops, collectives, compile);
// it computes nothing of its own beyond totals and the observation rules.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "jaxprof/analysis/critical_path/critical_path_digest.h"
#include "jaxprof/analysis/ops/op_clock.h"
#include "jaxprof/analysis/steps/steady_state.h"
#include "jaxprof/model/profile.h"
#include "jaxprof/model/share_guard.h"

namespace jaxprof {

struct SummaryOptions {
  size_t top = 5;           // rows per section
  size_t observations = 3;  // observations kept
  SteadyStateOptions steady;
  bool critical_path = true;  // compute_summary: follow the median steady step's critical path
};

// Over all devices: sums of each device's span and parts (timeline), so shares are of device time.
struct SummaryDeviceTime {
  uint32_t devices = 0;
  uint64_t executions = 0;  // module executions found on the devices
  int64_t span_ps = 0;
  int64_t set_apart_ps = 0;  // not steady state (steady_state.h); the shares below exclude it
  int64_t busy_ps = 0;
  int64_t compute_ps = 0;
  int64_t comm_exposed_ps = 0;
  int64_t memcpy_exposed_ps = 0;
  int64_t idle_ps = 0;
  int64_t idle_in_modules_ps = 0;
  int64_t idle_between_modules_ps = 0;
  // Shares of the steady device time (span - set_apart), the bases every page uses.
  double idle_share = 0;
  double compute_share = 0, comm_exposed_share = 0, memcpy_exposed_share = 0;
  double idle_in_modules_share = 0, idle_between_modules_share = 0;
  int64_t steady_span_ps() const { return span_ps - set_apart_ps; }
};

struct SummaryModule {
  std::string name;
  ProgramId program_id = kNoProgram;
  uint64_t executions = 0;
  uint64_t warmup_executions = 0;
  double mean_ps = 0;  // steady state
  int64_t total_ps = 0;
  double share = 0;  // of all modules' execution time
};

struct SummaryOp {
  std::string name;
  std::string module;
  std::string opcode;
  std::string op_name;
  std::string source;
  uint64_t count = 0;  // all devices
  int64_t total_ps = 0;
  int64_t self_ps = 0;
  double share = 0;  // self / busy time of all devices
};

struct SummaryCollective {
  std::string name;
  std::string module;
  ProgramId program_id = kNoProgram;
  std::string opcode;
  int64_t group_size = 0;
  uint64_t message_bytes = 0;
  uint64_t count = 0;
  int64_t total_ps = 0;
  int64_t exposed_ps = 0;
  double exposed_per_execution_ps = 0;  // exposed / count (one device's execution)
  double busbw_gbps = 0;
};

struct SummaryCompile {
  uint64_t compiles = 0;
  int64_t wall_ps = 0;
  std::string top_module;  // the module with the most compile time
  int64_t top_module_wall_ps = 0;
  uint64_t recompiled_modules = 0;  // modules compiled more than once
};

struct Observation {
  std::string rule;  // stable id: idle-between-modules, exposed-collective, dominant-op, ...
  std::string text;
  int64_t time_ps = 0;  // device (or wall) time at stake; observations rank by it
  double share = 0;
};

struct SummaryResult {
  std::vector<std::string> hosts;
  SummaryDeviceTime device;
  std::vector<SummaryModule> modules;
  std::vector<SummaryOp> ops;
  DurationClock duration_clock = DurationClock::kTimeline;  // of the ops' times (op_clock.h)
  std::vector<SummaryCollective> collectives;
  std::string bandwidth_convention;
  SummaryCompile compile;
  SetApartSummary set_apart;
  std::vector<Observation> observations;
  // The median steady step's critical path. Partial summaries keep no events, so from them (and
  // from several hosts, never in memory together when read host by host) it says why not; the
  // command follows it on the one profile it reads (critical_path_digest.h).
  CriticalPathDigest critical_path;
  std::vector<std::string> warnings;
  ShareGuard shares;  // shares clipped to 1 (their warning is in `warnings`)
};

SummaryResult compute_summary(const Profile& profile, const SummaryOptions& options = {});

class PartialSet;
// What a summary needs from each host (PartialPart bits).
uint32_t summary_parts();
SummaryResult summary_from_partials(const PartialSet& set, const SummaryOptions& options = {});

// Why summary_from_partials has no critical path for a set of `hosts` hosts.
std::string critical_path_unavailable(size_t hosts);
// The critical path of a one-host profile as summary shows it: a profile it cannot follow is
// said in `unavailable`, not thrown (the rest of the summary stands).
CriticalPathDigest summary_critical_path(const Profile& profile, size_t top);

}  // namespace jaxprof
