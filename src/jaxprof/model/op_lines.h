// Which lines of a device plane hold its op executions, by name: GPU stream lines, TPU "XLA Ops"
// lines, and nsys-jax archives' "XLA Thunks" (thunk ranges projected onto the GPU). Importers use
// it to decode what only op events need (the device clock) on those lines alone.
#pragma once

#include <string_view>

namespace jaxprof {

inline bool is_op_line_name(std::string_view name) {
  return name.starts_with("Stream #") || name == "XLA Ops" || name == "XLA Thunks";
}

}  // namespace jaxprof
