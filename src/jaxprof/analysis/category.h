// Coarse op categories for "where does the time go" at a glance. The HLO opcode decides when the
// HLO index knows the op; otherwise the kernel or event name does.
#pragma once

#include <string_view>

namespace jaxprof {

enum class OpCategory { kGemm, kConvolution, kAttention, kElementwise, kCollective, kMemcpy, kOther };

const char* category_name(OpCategory c);

// `opcode` may be empty (unknown). `custom_call_target` helps for custom-call ops.
OpCategory categorize(std::string_view opcode, std::string_view op_or_kernel_name);

}  // namespace jaxprof
