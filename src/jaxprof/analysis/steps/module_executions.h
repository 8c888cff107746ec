// XLA module executions per device: when each run of a compiled program started and ended on the
// device, and which op events belong to it. The basis of per-module statistics and of telling
// idle time inside a module from idle time between modules.
//
// How an execution is found depends on what the profile records (docs/modules.md):
// - TPU: the events of the device's "XLA Modules" line; op events belong to the one they start in.
// - CPU backend: op events with equal (hlo_module, program_id, run_id) on one device_ordinal;
//   without run_id, runs of op events of one module on one host thread.
// - GPU: kernels are tied to the host call that launched them (correlation_id); the launch lies
//   inside one host `GpuExecutable::ExecuteThunks` event, and that event is the execution. When a
//   profile lacks the host side, consecutive kernels of the same module (and group_id) are one.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "jaxprof/model/column.h"
#include "jaxprof/model/execution_role.h"
#include "jaxprof/model/profile.h"

namespace jaxprof {


struct ModuleExecution {
  uint32_t module = 0;  // index into Profile::modules (0 when no op event names the module)
  std::string name;     // module name
  ProgramId program_id = kNoProgram;
  std::optional<int64_t> run_id;  // when the profile records one
  int64_t start_ps = 0;
  int64_t end_ps = 0;                // exclusive
  std::span<const uint32_t> events;  // the op events in it, by start (in the device's storage)
  bool warmup = false;  // the first of its program on this device, compiled in the capture
  int64_t duration_ps() const { return end_ps - start_ps; }
};

struct DeviceExecutions {
  uint32_t plane = 0;
  std::string device;  // as op_devices() names it
  ExecutionSource source = ExecutionSource::kNone;
  std::vector<ModuleExecution> executions;  // by start
  // The executions' events, one execution after another: one allocation per device rather than
  // one per execution.
  Column<uint32_t> event_storage;
};

// One entry per device of op_devices(), in the same order (devices without executions included,
// with source kNone). Decodes the device lines, and on GPU the host lines of the same host.
// Computed once per profile and shared by every analysis that asks (see Profile::memo).
const std::vector<DeviceExecutions>& module_executions(const Profile& profile);

}  // namespace jaxprof
