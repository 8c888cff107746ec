// "How long did compiling take, and in which phase": the compile events JAX and XLA record on
// host threads (JAX's trace / lower / backend-compile stages, XLA's compile driver, HLO passes,
// code generation), grouped into one compile per jit cache miss, with per-phase self times that
// add up to the compile's wall time exactly, and the work XLA hands to worker threads.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "jaxprof/model/compile_record.h"
#include "jaxprof/model/profile.h"

namespace jaxprof {

// What a host event's name says about compilation.
enum class CompileEventKind : uint8_t {
  kNone,      // not a compile event (or not recognised)
  kJaxStage,  // a JAX stage that starts a compile: trace_to_jaxpr_dynamic, lower_*,
              // backend_compile*
  kXlaRoot,   // XLA's compile entry: PjRtCpuClient::Compile, TfrtTpuCompiler::Compile, ...
  kPhase,     // a recognised finer event (pass pipeline, codegen step) with a fixed phase
};
struct CompileEventClass {
  CompileEventKind kind = CompileEventKind::kNone;
  CompilePhase phase = CompilePhase::kCompileOther;
};
CompileEventClass classify_compile_event(std::string_view name);
// Events whose nested detail is folded into them (an autotuner measurement's kernel launches).
bool is_folded_compile_event(std::string_view name);


struct ModuleCompile {
  std::string module;                 // "" = not known
  ProgramId program_id = kNoProgram;  // modules are told apart by name and program id
  uint64_t compiles = 0;
  int64_t wall_ps = 0;
  int64_t worker_busy_ps = 0;
  std::vector<CompilePhaseTime> phases;
};

struct CompileOptions {
  size_t top_steps = 0;  // per compile, keep the N largest steps (0 = all)
  // Steps are the HLO passes alone (pass names without module or program id), and the result
  // carries their totals over every compile.
  bool passes_only = false;
  // Only the compiles, their wall time and module (phases and steps stay zero, no notes on
  // unattributed events): reads the launching threads alone when that names every module.
  bool totals_only = false;
};

struct CompileResult {
  std::vector<CompileRecord> compiles;  // by start time
  std::vector<ModuleCompile> modules;   // by wall_ps descending
  int64_t wall_ps = 0;                  // sum over compiles
  int64_t worker_busy_ps = 0;
  std::vector<CompilePhaseTime> phases;  // totals over compiles
  bool passes_only = false;
  std::vector<CompileStepTime> passes;  // with passes_only: per pass over compiles, by wall_ps
  std::vector<std::string> notes;       // what the profile can and cannot tell
};

CompileResult compute_compile(const Profile& profile, const CompileOptions& options = {});

// The lines the totals (`totals_only`) are read from first: the launching threads.
std::vector<uint32_t> compile_totals_lines(const Profile& profile);

// Each host's compiles as the launching threads show them (CompileOptions::totals_only: start,
// wall time, module, program id), one entry per Profile host, records by start. Computed once
// per profile and shared (the warm-up rule of module_executions and the totals-only partials).
struct PartialCompile;
const std::vector<PartialCompile>& compile_totals_by_host(const Profile& profile);

class PartialSet;
CompileResult compile_from_partials(const PartialSet& set, const CompileOptions& options = {});

}  // namespace jaxprof
