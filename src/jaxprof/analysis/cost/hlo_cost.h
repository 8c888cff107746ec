// FLOPs and bytes of one execution of an HLO instruction, from the HLO alone. The counting
// follows XLA's own cost analysis (HloCostAnalysis), so that jaxprof's figures can be checked
// against `jax.jit(f).lower(...).compile().cost_analysis()`:
//   - dot: 2 x output elements x the product of the contracting dimensions;
//   - convolution: 2 x (input features / feature groups) x output features x
//     (batch / batch groups) x the valid (input, kernel) position pairs of each spatial
//     dimension (padding and dilation taken into account);
//   - elementwise ops: 1 FLOP per output element; exp, log, sin, tanh, sqrt, ... count as
//     transcendentals instead;
//   - reduce: (input - output elements) x the reducer's FLOPs; reduce-window, map, scatter,
//     select-and-scatter, sort, fft, rng likewise by their element counts;
//   - data movement (copy, transpose, broadcast, slice, gather, ...): no FLOPs;
//   - fusions, calls and async computations: the sum over the called computations;
//     while loops with a known trip count (backend config): the trip count times the body;
//   - custom calls: custom_call_cost.h.
// Bytes are counted at the instruction's boundary only (what a kernel reads and writes):
// operands plus results, where a fusion parameter used only through slices reads only the
// slices and a dynamic-update-slice writes only its update. Anything the HLO does not determine
// (a conditional's branch, an unknown custom call inside a fusion, an opcode this model does
// not know) makes the whole instruction unknown, with the reason in OpCost::detail.
#pragma once

#include "jaxprof/analysis/cost/op_cost.h"
#include "jaxprof/model/hlo_index.h"

namespace jaxprof {

OpCost hlo_instruction_cost(const HloModule& module, const HloInstruction& instr);

// The FLOPs of a dot and of a convolution given their operand and result shapes (also used by
// the custom-call models). Return false when the shapes and dimension numbers disagree.
bool dot_flops(const HloShape& lhs, const HloShape& result, const HloDotDimensions& dims,
               uint64_t& flops);
bool convolution_flops(const HloShape& input, const HloShape& kernel, const HloShape& output,
                       const HloConvolutionDimensions& dims,
                       const std::vector<HloWindowDimension>* window, int64_t feature_groups,
                       int64_t batch_groups, uint64_t& flops);

// The compute type of matrix work on operands of this element type, at this precision.
ComputeType matrix_compute_type(int32_t element_type, uint8_t operand_precision);

// The shape of an instruction's result without the trailing scratch buffer that cuBLAS, cuDNN
// and friends return as the last tuple element (a 1-D u8/s8 array): for bytes written.
uint64_t result_bytes_without_workspace(const HloShape& shape);

}  // namespace jaxprof
