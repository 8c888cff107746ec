// One compile as the profile shows it: its wall time split into phases (trace, lower, HLO passes,
// codegen, ...) and the event names along that split. analysis/compile finds them in a profile;
// partial summaries (model/partial) carry them between hosts.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "jaxprof/model/profile.h"

namespace jaxprof {

enum class CompilePhase : uint8_t {
  kTrace,          // JAX: Python function -> jaxpr
  kLower,          // JAX: jaxpr -> StableHLO
  kHloPasses,      // XLA: HLO optimization passes (SPMD partitioning, fusion, layout, ...)
  kCodegen,        // XLA: backend code generation (thunks, MLIR/LLVM, TPU LLO, ...)
  kCompileOther,   // the compile driver's own time (backend_compile, Client::Compile): waiting,
                   // loading, bookkeeping not covered by a finer event
  kBetweenStages,  // inside the compile window but in no compile event (Python between stages)
};
inline constexpr int kCompilePhaseCount = 6;

const char* compile_phase_name(CompilePhase p);

struct CompilePhaseTime {
  CompilePhase phase = CompilePhase::kCompileOther;
  int64_t wall_ps = 0;    // share of the compile's wall time (the phases partition it)
  int64_t thread_ps = 0;  // time of this phase summed over every thread (launching + workers)
};

// Time per event name along the wall-time partition (the finest breakdown the profile has).
struct CompileStepTime {
  std::string name;
  CompilePhase phase = CompilePhase::kCompileOther;
  uint64_t count = 0;     // events of this name in the compile (all threads)
  int64_t wall_ps = 0;    // wall time attributed to it (self time along the partition)
  int64_t thread_ps = 0;  // self time summed over threads
};

struct CompileRecord {
  std::string host;
  std::string thread;    // the line that launched it
  std::string module;    // XLA module name when the events say it, else ""
  std::string function;  // the jitted Python function (PjitFunction(f) -> "f"), else ""
  ProgramId program_id = kNoProgram;  // when the compile's events say it (NVTX ranges)
  int64_t start_ps = 0;
  int64_t wall_ps = 0;
  uint64_t events = 0;          // compile events attributed to it, all threads
  uint32_t worker_threads = 0;  // other threads that did part of it
  int64_t worker_busy_ps = 0;   // union of its events per worker thread, summed over threads
  std::vector<CompilePhaseTime> phases;  // every phase, in enum order; wall_ps adds up to wall_ps
  std::vector<CompileStepTime> steps;    // by wall_ps descending
};

}  // namespace jaxprof
