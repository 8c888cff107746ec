#include "jaxprof/model/compile_record.h"

namespace jaxprof {

const char* compile_phase_name(CompilePhase p) {
  switch (p) {
    case CompilePhase::kTrace:
      return "trace";
    case CompilePhase::kLower:
      return "lower";
    case CompilePhase::kHloPasses:
      return "hlo-passes";
    case CompilePhase::kCodegen:
      return "codegen";
    case CompilePhase::kCompileOther:
      return "compile-other";
    case CompilePhase::kBetweenStages:
      return "between-stages";
  }
  return "?";
}

}  // namespace jaxprof
