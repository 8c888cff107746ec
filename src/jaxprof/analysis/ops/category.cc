#include "jaxprof/analysis/ops/category.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <string>

#include "jaxprof/analysis/cost/custom_call_cost.h"
#include "jaxprof/analysis/ops/memory_op.h"
#include "jaxprof/analysis/ops/name_tokens.h"

namespace jaxprof {

namespace {

// Fused and called computations nest a few levels deep at most; a corrupt proto may loop.
constexpr int kMaxNesting = 16;

bool is_collective_opcode(std::string_view op) {
  static constexpr std::array<std::string_view, 12> kOps = {"all-reduce",
                                                            "all-gather",
                                                            "reduce-scatter",
                                                            "all-to-all",
                                                            "collective-permute",
                                                            "collective-broadcast",
                                                            "all-reduce-start",
                                                            "all-reduce-done",
                                                            "all-gather-start",
                                                            "all-gather-done",
                                                            "collective-permute-start",
                                                            "collective-permute-done"};
  return std::find(kOps.begin(), kOps.end(), op) != kOps.end() || op.starts_with("send") ||
         op.starts_with("recv") || op == "ragged-all-to-all";
}

// Copies and fills are memory_op.h's decision, the one every analysis uses.
bool is_memcpy_opcode(std::string_view opcode) {
  return memory_op_of_opcode(opcode) != MemoryOp::kNone;
}
bool is_memcpy_name(std::string_view name) { return memory_op_of_name(name) != MemoryOp::kNone; }

bool is_elementwise_opcode(std::string_view op) {
  static constexpr std::array<std::string_view, 24> kElementwise = {
      "add",         "subtract",  "multiply", "divide",    "maximum", "minimum",
      "exponential", "log",       "tanh",     "negate",    "convert", "select",
      "compare",     "broadcast", "reduce",   "transpose", "reshape", "sqrt",
      "rsqrt",       "power",     "abs",      "logistic",  "iota",    "concatenate"};
  return std::find(kElementwise.begin(), kElementwise.end(), op) != kElementwise.end();
}

OpCategory of_custom_call(const HloInstruction& instr) {
  switch (custom_call_kind(instr.custom_call_target, instr.backend_config)) {
    case CustomCallKind::kGemm:
      return OpCategory::kGemm;
    case CustomCallKind::kConvolution:
      return OpCategory::kConvolution;
    case CustomCallKind::kAttention:
      return OpCategory::kAttention;
    case CustomCallKind::kOther:
      break;
  }
  return OpCategory::kOther;
}

// What a called computation holds that decides its caller's category.
struct Contents {
  bool convolution = false, attention = false, gemm = false, collective = false;
};

void scan(const HloModule& m, const HloComputation& comp, Contents& c, int depth) {
  if (depth > kMaxNesting) return;
  for (uint32_t idx : comp.instructions) {
    const HloInstruction& in = m.instructions[idx];
    const std::string_view op = in.opcode;
    if (op == "convolution") c.convolution = true;
    if (op == "dot") c.gemm = true;
    if (is_collective_opcode(op)) c.collective = true;
    if (op == "custom-call") {
      switch (of_custom_call(in)) {
        case OpCategory::kGemm:
          c.gemm = true;
          break;
        case OpCategory::kConvolution:
          c.convolution = true;
          break;
        case OpCategory::kAttention:
          c.attention = true;
          break;
        default:
          break;
      }
    }
    if (op == "fusion" || op == "call")
      for (size_t i = 0; i < in.called_computation_ids.size(); ++i)
        if (const HloComputation* inner = m.called(in, i)) scan(m, *inner, c, depth + 1);
  }
}

OpCategory categorize_instruction_at(const HloModule& m, const HloInstruction& instr, int depth) {
  const std::string_view op = instr.opcode;
  if (is_collective_opcode(op)) return OpCategory::kCollective;
  // An async wrapper (async-start/-update/-done) is what it wraps: its computation's root.
  if (op.starts_with("async-") && depth < kMaxNesting) {
    if (const HloComputation* wrapped = m.called(instr, 0))
      if (const HloInstruction* root = m.root(*wrapped))
        return categorize_instruction_at(m, *root, depth + 1);
    return OpCategory::kOther;
  }
  if (is_memcpy_opcode(op)) return OpCategory::kMemcpy;
  if (op == "custom-call") return of_custom_call(instr);
  if (op == "dot") return OpCategory::kGemm;
  if (op == "convolution") return OpCategory::kConvolution;
  if (op == "fusion" || op == "call") {
    // The heaviest work decides: convolution, then attention, then matrix products (a GEMM
    // fusion's root is often a convert or bitcast of its dot); then a fused collective.
    Contents c;
    for (size_t i = 0; i < instr.called_computation_ids.size(); ++i)
      if (const HloComputation* comp = m.called(instr, i)) scan(m, *comp, c, 0);
    if (c.convolution) return OpCategory::kConvolution;
    if (c.attention) return OpCategory::kAttention;
    if (c.gemm) return OpCategory::kGemm;
    if (c.collective) return OpCategory::kCollective;
    return op == "fusion" ? OpCategory::kElementwise : OpCategory::kOther;
  }
  if (is_elementwise_opcode(op)) return OpCategory::kElementwise;
  return OpCategory::kOther;
}

// Two or three words in a row: XLA names collectives with hyphens ("all-reduce.5").
bool has_words_in_row(std::string_view text, std::initializer_list<std::string_view> seq) {
  std::array<std::string_view, 3> last{};
  size_t seen = 0;
  return any_word(text, [&](std::string_view w) {
    last[0] = last[1];
    last[1] = last[2];
    last[2] = w;
    ++seen;
    if (seen < seq.size()) return false;
    size_t k = 3 - seq.size();
    for (std::string_view s : seq)
      if (!same_word(last[k++], s)) return false;
    return true;
  });
}

}  // namespace

const char* category_name(OpCategory c) {
  switch (c) {
    case OpCategory::kGemm:
      return "gemm";
    case OpCategory::kConvolution:
      return "convolution";
    case OpCategory::kAttention:
      return "attention";
    case OpCategory::kElementwise:
      return "elementwise/fusion";
    case OpCategory::kCollective:
      return "collective";
    case OpCategory::kMemcpy:
      return "memcpy";
    case OpCategory::kOther:
      return "other";
  }
  return "other";
}

OpCategory categorize_instruction(const HloModule& module, const HloInstruction& instr) {
  return categorize_instruction_at(module, instr, 0);
}

OpCategory categorize_name(std::string_view name) {
  auto word = [&](auto&& pred) { return any_word(name, pred); };
  if (word([](std::string_view w) {
        return word_starts_with(w, "nccl") || word_starts_with(w, "rccl") ||
               same_word(w, "allreduce") || same_word(w, "allgather") ||
               same_word(w, "reducescatter") || same_word(w, "alltoall") ||
               same_word(w, "sendrecv");
      }) ||
      has_words_in_row(name, {"all", "reduce"}) || has_words_in_row(name, {"all", "gather"}) ||
      has_words_in_row(name, {"reduce", "scatter"}) ||
      has_words_in_row(name, {"all", "to", "all"}) ||
      has_words_in_row(name, {"collective", "permute"}) ||
      has_words_in_row(name, {"collective", "broadcast"}))
    return OpCategory::kCollective;
  if (is_memcpy_name(name)) return OpCategory::kMemcpy;
  if (has_word(name, {"attention", "attn", "flash", "fmha", "mha", "sdpa", "splash"}))
    return OpCategory::kAttention;
  // Convolution before GEMM: implicit-GEMM convolution kernels also say "gemm".
  if (has_word(name, {"conv", "convolution", "convolve", "conv1d", "conv2d", "conv3d", "fprop",
                      "dgrad", "wgrad", "im2col", "im3d2col", "col2im", "winograd"}) ||
      has_words_in_row(name, {"implicit", "gemm"}) || word([](std::string_view w) {
        return word_starts_with(w, "miopen") || word_starts_with(w, "cudnn");
      }))
    return OpCategory::kConvolution;
  if (has_word(name, {"matmul", "gemv", "dot", "cutlass", "xmma", "wgmma"}) ||
      word([](std::string_view w) {
        return word_ends_with(w, "gemm") || word_starts_with(w, "cublas") ||
               word_starts_with(w, "hipblas") || word_starts_with(w, "rocblas") ||
               word_starts_with(w, "cutlass") || same_word(w, "cijk");
      }))
    return OpCategory::kGemm;
  if (has_word(name, {"fusion", "elementwise", "loop", "wrapped", "reduce", "reduction",
                      "broadcast", "convert", "transpose", "eigenmetakernel"}))
    return OpCategory::kElementwise;
  return OpCategory::kOther;
}

OpCategory categorize(std::string_view opcode, std::string_view name, std::string_view op_name) {
  // The last JAX primitive of the op path: "jit(f)/transpose/dot_general" -> "dot_general".
  std::string_view primitive = op_name.substr(op_name.rfind('/') + 1);
  if (opcode == "fusion" || opcode == "custom-call" || opcode.empty()) {
    if (primitive == "dot_general") return OpCategory::kGemm;
    if (primitive == "conv_general_dilated") return OpCategory::kConvolution;
  }
  if (opcode.empty()) return categorize_name(name);
  if (is_collective_opcode(opcode)) return OpCategory::kCollective;
  if (is_memcpy_opcode(opcode)) return OpCategory::kMemcpy;
  if (opcode == "dot") return OpCategory::kGemm;
  if (opcode == "convolution") return OpCategory::kConvolution;
  if (opcode == "fusion" || opcode == "custom-call") {
    // Without the module only the instruction's name is left: its words, as for kernels.
    OpCategory by_name = categorize_name(name);
    if (by_name == OpCategory::kGemm || by_name == OpCategory::kConvolution ||
        by_name == OpCategory::kAttention)
      return by_name;
    return opcode == "fusion" ? OpCategory::kElementwise : OpCategory::kOther;
  }
  if (is_elementwise_opcode(opcode)) return OpCategory::kElementwise;
  return OpCategory::kOther;
}

}  // namespace jaxprof
