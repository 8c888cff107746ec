// FLOPs and bytes of custom calls, from their operand and result shapes and their backend
// configuration; what a custom call is (GEMM, convolution, attention) for categories.
//
// Modelled (per execution):
//   - cuBLAS / cuBLASLt / hipBLASLt GEMMs (__cublas$gemm, __cublas$lt$matmul[...], the targets
//     XLA uses on CUDA and ROCm alike): 2 x output elements x the contracting size from the
//     config's dot_dimension_numbers (batch and transposes included), plus one FLOP per output
//     element for each epilogue step (beta x C added, bias, ReLU; GELU counts a transcendental);
//   - cuDNN / MIOpen convolutions (__cudnn$conv...): the forward convolution's count from the
//     instruction's window and dimension numbers, for forward, backward-input and
//     backward-filter alike (each does the forward's multiply-adds), plus bias, side input and
//     activation for the fused forward;
//   - fused attention: XLA's cuDNN flash attention (__cudnn$fmha...) from the score matrix shape
//     in the config, and Transformer Engine (te_fused_attn_*_ffi) from its attributes; forward
//     2 x B x H x Sq x Sk x (Dqk + Dv), backward 2 x B x H x Sq x Sk x (3 Dqk + 2 Dv) (the
//     score recomputation and four gradient products), with causal (top-left or bottom-right)
//     and sliding-window masks counting only the (query, key) pairs they keep; padding masks
//     and ragged layouts depend on lengths known only at run time: unknown;
//   - Pallas kernels that carry a cost estimate in their config (TPU Mosaic), and Pallas/Triton
//     matmul kernels whose operand shapes make a matrix product.
// Bytes are operands read plus results written, without the trailing workspace buffer.
// Anything else is unknown, with the reason in OpCost::detail.
#pragma once

#include <string_view>

#include "jaxprof/analysis/cost/op_cost.h"
#include "jaxprof/model/hlo_index.h"

namespace jaxprof {

enum class CustomCallKind : uint8_t { kGemm, kConvolution, kAttention, kOther };

// What a custom call computes, from its target, else from the kernel name its config carries
// (whole words: attention, flash, fmha, mha, matmul, gemm, conv, ...).
CustomCallKind custom_call_kind(std::string_view target, std::string_view backend_config);

OpCost custom_call_cost(const HloModule& module, const HloInstruction& instr);

}  // namespace jaxprof
