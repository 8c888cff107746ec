#include "jaxprof/model/execution_role.h"

namespace jaxprof {

const char* execution_source_name(ExecutionSource s) {
  switch (s) {
    case ExecutionSource::kNone:
      return "none";
    case ExecutionSource::kModuleLine:
      return "module-line";
    case ExecutionSource::kRunId:
      return "run-id";
    case ExecutionSource::kHostLaunch:
      return "host-launch";
    case ExecutionSource::kConsecutive:
      return "consecutive";
    case ExecutionSource::kHostThread:
      return "host-thread";
  }
  return "none";
}

const char* execution_role_name(ExecutionRole role) {
  switch (role) {
    case ExecutionRole::kSteady:
      return "steady";
    case ExecutionRole::kWarmup:
      return "warm-up";
    case ExecutionRole::kAutotuning:
      return "autotuning";
  }
  return "steady";
}

}  // namespace jaxprof
