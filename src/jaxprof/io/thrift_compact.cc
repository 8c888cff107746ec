#include "jaxprof/io/thrift_compact.h"

#include <cstring>

#include "jaxprof/common/error.h"

namespace jaxprof::thrift {

namespace {
// Hostile nesting must not exhaust the stack.
constexpr int kMaxDepth = 64;
int64_t unzigzag(uint64_t v) { return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1); }
}  // namespace

CompactReader::CompactReader(std::string_view bytes, const char* origin)
    : p_(bytes.data()), end_(bytes.data() + bytes.size()), origin_(origin) {}

void CompactReader::fail(const char* reason) const {
  throw InputError("", std::string("corrupt Thrift metadata: ") + reason,
                   static_cast<int64_t>(p_ - origin_));
}

uint64_t CompactReader::varint() {
  uint64_t v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (p_ >= end_) fail("truncated varint");
    uint8_t b = static_cast<uint8_t>(*p_++);
    v |= static_cast<uint64_t>(b & 0x7f) << shift;
    if (!(b & 0x80)) return v;
  }
  fail("varint longer than 10 bytes");
}

bool CompactReader::next_field(int16_t& id, uint8_t& type) {
  if (p_ >= end_) fail("struct ends without a stop field");
  uint8_t b = static_cast<uint8_t>(*p_++);
  type = b & 0x0f;
  if (type == kStop) return false;
  uint8_t delta = b >> 4;
  if (delta != 0) {
    id = static_cast<int16_t>(last_id_ + delta);
  } else {
    id = static_cast<int16_t>(unzigzag(varint()));
  }
  last_id_ = id;
  return true;
}

void CompactReader::begin_struct() {
  if (depth_ >= kMaxDepth) fail("structs nested too deeply");
  stack_[depth_++] = last_id_;
  last_id_ = 0;
}

void CompactReader::end_struct() {
  if (depth_ > 0) last_id_ = stack_[--depth_];
}

int64_t CompactReader::read_i64() { return unzigzag(varint()); }

int32_t CompactReader::read_i32() {
  int64_t v = read_i64();
  if (v < INT32_MIN || v > INT32_MAX) fail("i32 out of range");
  return static_cast<int32_t>(v);
}

double CompactReader::read_double() {
  if (end_ - p_ < 8) fail("truncated double");
  double d;
  std::memcpy(&d, p_, 8);
  p_ += 8;
  return d;
}

std::string_view CompactReader::read_binary() {
  uint64_t n = varint();
  if (n > static_cast<uint64_t>(end_ - p_)) fail("binary longer than its buffer");
  std::string_view s(p_, n);
  p_ += n;
  return s;
}

bool CompactReader::read_list_bool() {
  if (p_ >= end_) fail("truncated bool");
  return *p_++ == 1;
}

void CompactReader::read_list(uint8_t& element_type, uint32_t& size) {
  if (p_ >= end_) fail("truncated list header");
  uint8_t b = static_cast<uint8_t>(*p_++);
  element_type = b & 0x0f;
  uint64_t n = b >> 4;
  if (n == 15) n = varint();
  // Every element takes at least one byte, so a larger count cannot be real.
  if (n > static_cast<uint64_t>(end_ - p_)) fail("list longer than its buffer");
  size = static_cast<uint32_t>(n);
}

void CompactReader::skip(uint8_t type) { skip_value(type, 0); }

void CompactReader::skip_value(uint8_t type, int depth) {
  if (depth > kMaxDepth) fail("values nested too deeply");
  switch (type) {
    case kBoolTrue:
    case kBoolFalse:
      return;  // a field's bool lives in its type
    case kByte:
      if (p_ >= end_) fail("truncated byte");
      ++p_;
      return;
    case kI16:
    case kI32:
    case kI64:
      varint();
      return;
    case kDouble:
      read_double();
      return;
    case kBinary:
      read_binary();
      return;
    case kList:
    case kSet: {
      uint8_t et;
      uint32_t n;
      read_list(et, n);
      for (uint32_t i = 0; i < n; ++i) {
        if (et == kBoolTrue || et == kBoolFalse)
          read_list_bool();
        else
          skip_value(et, depth + 1);
      }
      return;
    }
    case kMap: {
      uint64_t n = varint();
      if (n == 0) return;
      if (n > static_cast<uint64_t>(end_ - p_)) fail("map longer than its buffer");
      if (p_ >= end_) fail("truncated map header");
      uint8_t kv = static_cast<uint8_t>(*p_++);
      for (uint64_t i = 0; i < n; ++i) {
        skip_value(kv >> 4, depth + 1);
        skip_value(kv & 0x0f, depth + 1);
      }
      return;
    }
    case kStruct: {
      begin_struct();
      int16_t id;
      uint8_t t;
      while (next_field(id, t)) skip_value(t, depth + 1);
      end_struct();
      return;
    }
    default:
      fail("unknown Thrift type");
  }
}

}  // namespace jaxprof::thrift
