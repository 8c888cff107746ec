// HloShape: XLA's primitive types (xla_data.proto's PrimitiveType) with their short names and
// storage bits, and what sizes and labels need of a shape: its bytes, its elements, its text.
#include <string>

#include "jaxprof/model/hlo_index.h"

namespace jaxprof {
namespace {

// xla.PrimitiveType numbers (xla_data.proto).
enum PrimitiveType : int32_t {
  kPred = 1,
  kS8 = 2,
  kS16 = 3,
  kS32 = 4,
  kS64 = 5,
  kU8 = 6,
  kU16 = 7,
  kU32 = 8,
  kU64 = 9,
  kF16 = 10,
  kF32 = 11,
  kF64 = 12,
  kTuple = 13,
  kOpaque = 14,
  kC64 = 15,
  kBF16 = 16,
  kToken = 17,
  kC128 = 18,
  kF8E5M2 = 19,
  kF8E4M3FN = 20,
  kS4 = 21,
  kU4 = 22,
  kF8E4M3B11FNUZ = 23,
  kF8E5M2FNUZ = 24,
  kF8E4M3FNUZ = 25,
  kS2 = 26,
  kU2 = 27,
  kF8E4M3 = 28,
  kF8E3M4 = 29,
  kS1 = 30,
  kU1 = 31,
  kF4E2M1FN = 32,
  kF8E8M0FNU = 33,
  kBuffer = 34,
};

struct TypeInfo {
  const char* name;  // XLA's lowercase short name, as in HLO text
  int bits;          // storage bits per element; 0 for types without array storage
};

TypeInfo type_info(int32_t t) {
  switch (t) {
    case kPred:
      return {"pred", 8};
    case kS8:
      return {"s8", 8};
    case kS16:
      return {"s16", 16};
    case kS32:
      return {"s32", 32};
    case kS64:
      return {"s64", 64};
    case kU8:
      return {"u8", 8};
    case kU16:
      return {"u16", 16};
    case kU32:
      return {"u32", 32};
    case kU64:
      return {"u64", 64};
    case kF16:
      return {"f16", 16};
    case kF32:
      return {"f32", 32};
    case kF64:
      return {"f64", 64};
    case kTuple:
      return {"tuple", 0};
    case kOpaque:
      return {"opaque", 0};
    case kC64:
      return {"c64", 64};
    case kBF16:
      return {"bf16", 16};
    case kToken:
      return {"token", 0};
    case kC128:
      return {"c128", 128};
    case kF8E5M2:
      return {"f8e5m2", 8};
    case kF8E4M3FN:
      return {"f8e4m3fn", 8};
    case kS4:
      return {"s4", 4};
    case kU4:
      return {"u4", 4};
    case kF8E4M3B11FNUZ:
      return {"f8e4m3b11fnuz", 8};
    case kF8E5M2FNUZ:
      return {"f8e5m2fnuz", 8};
    case kF8E4M3FNUZ:
      return {"f8e4m3fnuz", 8};
    case kS2:
      return {"s2", 2};
    case kU2:
      return {"u2", 2};
    case kF8E4M3:
      return {"f8e4m3", 8};
    case kF8E3M4:
      return {"f8e3m4", 8};
    case kS1:
      return {"s1", 1};
    case kU1:
      return {"u1", 1};
    case kF4E2M1FN:
      return {"f4e2m1fn", 4};
    case kF8E8M0FNU:
      return {"f8e8m0fnu", 8};
    case kBuffer:
      return {"buffer", 0};
    default:
      return {nullptr, 0};
  }
}

uint64_t saturating_add(uint64_t a, uint64_t b) {
  uint64_t r;
  return __builtin_add_overflow(a, b, &r) ? UINT64_MAX : r;
}

}  // namespace

const char* primitive_type_name(int32_t element_type) { return type_info(element_type).name; }

uint64_t HloShape::element_count() const {
  if (type_info(element_type).bits == 0) return 0;
  uint64_t elements = 1;
  for (int64_t d : dimensions) {
    if (d <= 0) return 0;
    if (__builtin_mul_overflow(elements, static_cast<uint64_t>(d), &elements)) return UINT64_MAX;
  }
  return elements;
}

uint64_t HloShape::byte_size() const {
  if (element_type == kTuple || element_type == kBuffer) {
    uint64_t sum = 0;
    for (const HloShape& s : tuple_shapes) sum = saturating_add(sum, s.byte_size());
    return sum;
  }
  const int bits = type_info(element_type).bits;
  if (bits == 0) return 0;
  uint64_t elements = 1;
  for (int64_t d : dimensions) {
    if (d <= 0) return 0;  // 0 is a valid (empty) dimension; negative only in corrupt input
    if (__builtin_mul_overflow(elements, static_cast<uint64_t>(d), &elements)) return UINT64_MAX;
  }
  uint64_t bytes;
  if (bits % 8 == 0) {
    if (__builtin_mul_overflow(elements, static_cast<uint64_t>(bits / 8), &bytes))
      return UINT64_MAX;
    return bytes;
  }
  // Sub-byte types are packed; an array rounds up to whole bytes.
  uint64_t total_bits;
  if (__builtin_mul_overflow(elements, static_cast<uint64_t>(bits), &total_bits)) return UINT64_MAX;
  return total_bits / 8 + (total_bits % 8 != 0);
}

std::string HloShape::to_string() const {
  std::string out;
  if (element_type == kTuple || element_type == kBuffer) {
    out += element_type == kBuffer ? "b(" : "(";
    for (size_t i = 0; i < tuple_shapes.size(); ++i) {
      if (i) out += ", ";
      out += tuple_shapes[i].to_string();
    }
    out += ')';
    return out;
  }
  const char* name = type_info(element_type).name;
  if (name) {
    out += name;
  } else {
    out += "type" + std::to_string(element_type);
  }
  out += '[';
  for (size_t i = 0; i < dimensions.size(); ++i) {
    if (i) out += ',';
    out += std::to_string(dimensions[i]);
  }
  out += ']';
  return out;
}

}  // namespace jaxprof
