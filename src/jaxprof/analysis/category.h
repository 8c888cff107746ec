// Coarse op categories for "where does the time go" at a glance. The HLO opcode decides when the
// HLO index knows the op; otherwise the kernel or event name does.
#pragma once

#include <string_view>

namespace jaxprof {

enum class OpCategory {
  kGemm,
  kConvolution,
  kAttention,
  kElementwise,
  kCollective,
  kMemcpy,
  kOther
};

const char* category_name(OpCategory c);

// `opcode` may be empty (unknown); then the op or kernel name decides. `op_name` (the JAX op
// path, e.g. "jit(f)/dot_general") says what a fusion or custom call computes.
OpCategory categorize(std::string_view opcode, std::string_view op_or_kernel_name,
                      std::string_view op_name = {});

}  // namespace jaxprof
