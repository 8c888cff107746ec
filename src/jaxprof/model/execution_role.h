// How module executions are told apart: where a device's executions come from, and which are
// steady state and which are set apart (warm-up, autotuning), with the options that decide it.
// analysis/steps computes them; partial summaries (model/partial) carry them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace jaxprof {

enum class ExecutionSource : uint8_t {
  kNone,         // the device has no module executions
  kModuleLine,   // TPU "XLA Modules" line
  kRunId,        // CPU backend: run_id stats on op events
  kHostLaunch,   // GPU: correlation_id -> host launch -> enclosing ExecuteThunks event
  kConsecutive,  // GPU without host launches: runs of kernels of one module
  kHostThread,   // CPU backend without run_id: runs of op events of one module on one thread
};
const char* execution_source_name(ExecutionSource s);

struct SteadyStateOptions {
  bool include_autotuning = false;
  bool include_warmup = false;  // first executions, and the device time spent compiling
  bool operator==(const SteadyStateOptions&) const = default;
};

enum class ExecutionRole : uint8_t { kSteady, kWarmup, kAutotuning };
const char* execution_role_name(ExecutionRole role);

// What one kind of set-apart work amounted to, over all devices.
struct SetApartWork {
  uint64_t executions = 0;
  uint64_t op_events = 0;
  int64_t execution_ps = 0;          // summed durations of those executions
  std::vector<std::string> modules;  // distinct module labels, by name
  bool operator==(const SetApartWork&) const = default;
};

}  // namespace jaxprof
