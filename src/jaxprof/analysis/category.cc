#include "jaxprof/analysis/category.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <string>

#include "jaxprof/analysis/memory_op.h"

namespace jaxprof {

namespace {

bool contains_any(const std::string& haystack, std::initializer_list<std::string_view> needles) {
  for (std::string_view n : needles)
    if (haystack.find(n) != std::string::npos) return true;
  return false;
}

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

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

OpCategory categorize(std::string_view opcode, std::string_view name, std::string_view op_name) {
  // Copies and fills are decided by memory_op.h's rules: the opcode when known, else the name.
  if (opcode.empty() ? memory_op_of_name(name) != MemoryOp::kNone
                     : memory_op_of_opcode(opcode) != MemoryOp::kNone)
    return OpCategory::kMemcpy;
  std::string n = lower(name);
  // The last JAX primitive of the op path: "jit(f)/transpose/dot_general" -> "dot_general".
  std::string_view primitive = op_name.substr(op_name.rfind('/') + 1);
  if (opcode == "fusion" || opcode == "custom-call" || opcode.empty()) {
    if (primitive == "dot_general") return OpCategory::kGemm;
    if (primitive == "conv_general_dilated") return OpCategory::kConvolution;
  }
  if (contains_any(n, {"attention", "flash", "fmha", "mha_", "_attn", "splash"}))
    return OpCategory::kAttention;
  if (!opcode.empty()) {
    if (opcode == "dot") return OpCategory::kGemm;
    if (opcode == "convolution") return OpCategory::kConvolution;
    if (is_collective_opcode(opcode)) return OpCategory::kCollective;
    if (opcode == "fusion") {
      // Fusion names say what XLA fused around: gemm_fusion, convolution fusions, etc.
      if (contains_any(n, {"gemm", "dot", "matmul", "cublas"})) return OpCategory::kGemm;
      if (contains_any(n, {"convolution", "conv_", "_conv", "cudnn"}))
        return OpCategory::kConvolution;
      return OpCategory::kElementwise;
    }
    if (opcode == "custom-call") {
      if (contains_any(n, {"gemm", "matmul", "cublas", "dot"})) return OpCategory::kGemm;
      if (contains_any(n, {"conv", "cudnn"})) return OpCategory::kConvolution;
      return OpCategory::kOther;
    }
    static constexpr std::array<std::string_view, 24> kElementwise = {
        "add",         "subtract",  "multiply", "divide",    "maximum", "minimum",
        "exponential", "log",       "tanh",     "negate",    "convert", "select",
        "compare",     "broadcast", "reduce",   "transpose", "reshape", "sqrt",
        "rsqrt",       "power",     "abs",      "logistic",  "iota",    "concatenate"};
    if (std::find(kElementwise.begin(), kElementwise.end(), opcode) != kElementwise.end())
      return OpCategory::kElementwise;
    return OpCategory::kOther;
  }
  if (contains_any(n, {"nccl", "rccl", "all-reduce", "allreduce", "all_reduce", "all-gather",
                       "allgather", "reduce-scatter", "reducescatter", "all-to-all", "alltoall",
                       "collective-permute", "sendrecv"}))
    return OpCategory::kCollective;
  // Convolution first: implicit-GEMM convolution kernels also say "gemm".
  if (contains_any(n, {"convolution", "conv_", "_conv", "conv2d", "conv3d", "cudnn", "miopen",
                       "implicit_gemm", "igemm"}))
    return OpCategory::kConvolution;
  if (contains_any(n, {"gemm", "matmul", "cublas", "cutlass", "hipblas", "rocblas", "xmma", "wgmma",
                       "dot_general", "dot."}))
    return OpCategory::kGemm;
  if (contains_any(n, {"fusion", "elementwise", "loop_", "wrapped_", "reduce", "broadcast",
                       "convert", "transpose"}))
    return OpCategory::kElementwise;
  return OpCategory::kOther;
}

}  // namespace jaxprof
