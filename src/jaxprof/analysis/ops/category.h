// Coarse op categories for "where does the time go" at a glance. They come from the HLO whenever
// the profile carries it (the instruction's opcode, what its fused computation holds and returns,
// a custom call's target); a name decides only when there is no HLO, and then by whole words.
// docs/categories.md lists the categories and the rule for each.
#pragma once

#include <string_view>

#include "jaxprof/model/hlo_index.h"

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

// From the HLO instruction: opcode; for fusions (and calls, async wrappers) the convolutions,
// dots and custom calls they hold and their root's opcode; for custom calls the target.
OpCategory categorize_instruction(const HloModule& module, const HloInstruction& instr);

// From a kernel or op name alone, by whole words ("loop_convert_fusion" is not a convolution).
OpCategory categorize_name(std::string_view name);

// `opcode` may be empty (unknown); then the op or kernel name decides. `op_name` (the JAX op
// path, e.g. "jit(f)/dot_general") says what a fusion or custom call computes. For callers that
// hold no HloModule; prefer categorize_instruction when the instruction is known.
OpCategory categorize(std::string_view opcode, std::string_view op_or_kernel_name,
                      std::string_view op_name = {});

}  // namespace jaxprof
