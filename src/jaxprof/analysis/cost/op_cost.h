// What one execution of an op costs: FLOPs, transcendentals and bytes accessed, with where the
// figures came from. Shared by the HLO cost model (hlo_cost.h), the custom-call models
// (custom_call_cost.h) and the roofline, which also fills it from the profile's own stats.
#pragma once

#include <cstdint>
#include <string>

namespace jaxprof {

// Where an op's FLOPs and bytes came from, in the order the roofline tries them.
enum class CostSource : uint8_t {
  kProfile,     // the profile's own stats (flops, bytes_accessed, model_flops)
  kHlo,         // the HLO instruction: dots, convolutions, fusions, elementwise ops
  kCustomCall,  // a custom call's shapes and backend config (GEMMs, convolutions, attention)
  kMemcpy,      // a copy's byte count from its memcpy_details stat (no FLOPs)
  kUnknown,     // nothing says: counted and shown, never guessed
};

const char* cost_source_name(CostSource s);  // "profile", "hlo", "custom-call", "memcpy", "unknown"

// The arithmetic an op's FLOPs run on, to pick the peak it is compared with. Matrix work (dots,
// convolutions, GEMMs, attention) takes its operands' type; everything else is kVector.
enum class ComputeType : uint8_t {
  kVector,  // elementwise and reductions: the device's general (fp32 vector) rate
  kFp64,
  kFp32,  // fp32 matrix work at HIGHEST precision (or where the device has no TF32)
  kTf32,  // fp32 matrix work at DEFAULT/HIGH precision: TF32 where the device has it
  kBf16,
  kFp16,
  kFp8,
  kInt8,
};

const char* compute_type_name(ComputeType t);

struct OpCost {
  CostSource source = CostSource::kUnknown;
  uint64_t flops = 0;            // multiply-add = 2; elementwise op = 1 per element
  uint64_t transcendentals = 0;  // exp, log, sin, ... per element, apart from flops (as XLA)
  uint64_t bytes_accessed = 0;   // read + written at the op's boundary
  bool has_model_flops = false;
  uint64_t model_flops = 0;  // the profile's model_flops stat, when it has one
  ComputeType compute = ComputeType::kVector;
  // How the figures were worked out ("dot", "fusion of 12", "cublas gemm bias", "cudnn fmha
  // forward causal", "memcpy_details", ...), or why they are unknown.
  std::string detail;

  bool known() const { return source != CostSource::kUnknown; }
};

// Saturating arithmetic for costs: a corrupt shape must not wrap around to a small number.
inline uint64_t cost_add(uint64_t a, uint64_t b) {
  uint64_t r;
  return __builtin_add_overflow(a, b, &r) ? UINT64_MAX : r;
}
inline uint64_t cost_mul(uint64_t a, uint64_t b) {
  uint64_t r;
  return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}

}  // namespace jaxprof
