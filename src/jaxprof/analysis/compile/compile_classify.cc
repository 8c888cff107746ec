// What a host event's name says about compilation: JAX's stages, XLA's compile entries, and the
// finer events (pass pipelines, code generation) with the phase each belongs to.
#include <string_view>

#include "jaxprof/analysis/compile/compile.h"

namespace jaxprof {
namespace {

bool contains(std::string_view s, std::string_view part) {
  return s.find(part) != std::string_view::npos;
}

CompileEventClass stage(CompilePhase p) { return {CompileEventKind::kJaxStage, p}; }
CompileEventClass phase(CompilePhase p) { return {CompileEventKind::kPhase, p}; }

// XLA's NVTX ranges from nsys-jax archives, which the importer names "Kind" or "Kind:pass".
bool classify_nvtx(std::string_view name, CompileEventClass& out) {
  using P = CompilePhase;
  std::string_view kind = name.substr(0, name.find(':'));
  if (!kind.starts_with("Xla")) return false;
  if (kind == "XlaCompile") {
    out = {CompileEventKind::kXlaRoot, P::kCompileOther};
  } else if (kind == "XlaDumpHloModule") {
    out = {CompileEventKind::kPhase, P::kCompileOther};
  } else if (kind == "XlaPass" || kind == "XlaPassPipeline" || kind == "XlaMemoryScheduler" ||
             kind == "XlaBufferAssignment") {
    // Scheduling and buffer assignment rewrite and place HLO; they make no code.
    out = phase(P::kHloPasses);
  } else if (kind == "XlaCompileBackend" || kind.starts_with("XlaEmit") ||
             kind == "XlaOptimizeLlvmIr" || kind == "XlaDumpLlvmIr" || kind == "XlaCompileGpuAsm" ||
             kind == "XlaCreateGpuExecutable" || kind == "XlaCompileCudnnFusion" ||
             kind.starts_with("XlaAutotuner")) {
    // Autotuning compiles and times candidate kernels: backend work, so codegen.
    out = phase(P::kCodegen);
  } else {
    return false;
  }
  return true;
}

}  // namespace

bool is_folded_compile_event(std::string_view name) { return name == "XlaAutotunerMeasurement"; }

CompileEventClass classify_compile_event(std::string_view name) {
  using P = CompilePhase;
  if (CompileEventClass c; classify_nvtx(name, c)) return c;
  if (name.starts_with('$')) {
    // Python tracer frames ("$partial_eval.py:2268 trace_to_jaxpr"): only tracing is useful,
    // because JAX versions that annotate lowering do not annotate tracing before it.
    std::string_view fn = name.substr(name.rfind(' ') + 1);
    if (fn == "trace_to_jaxpr" || fn == "trace_to_jaxpr_dynamic") return stage(P::kTrace);
    return {};
  }
  // JAX's profiler annotations on its compile stages.
  if (name == "trace_to_jaxpr_dynamic" || name == "trace_to_jaxpr") return stage(P::kTrace);
  if (name == "lower_sharding_computation" || name == "lower_mesh_computation" ||
      name == "lower_jaxpr_to_module")
    return stage(P::kLower);
  if (name == "backend_compile" || name == "backend_compile_and_load")
    return stage(P::kCompileOther);
  // XLA: per-kernel compilers are code generation; client and backend compilers are the entry.
  if (name.starts_with("FusionCompiler::") || name.starts_with("JitCompiler::") ||
      name.starts_with("KernelCompiler"))
    return phase(P::kCodegen);
  if (name.ends_with("Client::Compile") || name.ends_with("Compiler::Compile") ||
      name.ends_with("Client::CompileAndLoad"))
    return {CompileEventKind::kXlaRoot, P::kCompileOther};
  if (name.starts_with("XLA::TPU ")) {
    bool hlo = contains(name, "HLO") || contains(name, "hlo") || contains(name, "PreLayout") ||
               contains(name, "X64 elimination");
    return phase(hlo ? P::kHloPasses : P::kCodegen);
  }
  if (contains(name, "RunBackend") || contains(name, "CompileCpuExecutable") ||
      name.starts_with("ThunkEmitter::") || name == "SplitModule" || name == "Codegen" ||
      name.starts_with("mlir::") || name.starts_with("TaskDispatcher::") ||
      contains(name, "LLVM") || contains(name, "llvm") || name.starts_with("LSRAv2") ||
      (name.ends_with("Pass") && name.find(' ') == std::string_view::npos))
    return phase(P::kCodegen);
  if (contains(name, "RunHloPasses") || contains(name, "passes") || contains(name, "Passes") ||
      name == "RunInvariantCheckers")
    return phase(P::kHloPasses);
  return {};
}

}  // namespace jaxprof
