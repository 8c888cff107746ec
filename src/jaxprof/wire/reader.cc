#include "jaxprof/wire/reader.h"

#include <bit>
#include <cstring>
#include <string>

namespace jaxprof::wire {

void fail(const uint8_t* origin, const uint8_t* at, const char* reason) {
  throw InputError("", std::string("corrupt protobuf: ") + reason, at - origin);
}

void expect_type(const Reader& r, const Field& f, WireType t, const char* what) {
  if (f.type == t) return;
  static const char* names[] = {"varint",    "fixed64", "length-delimited", "start-group",
                                "end-group", "fixed32", "invalid",          "invalid"};
  throw InputError("",
                   std::string("corrupt protobuf: ") + what + " has wire type " +
                       names[static_cast<int>(f.type) & 7] + ", expected " +
                       names[static_cast<int>(t) & 7],
                   r.field_offset());
}

uint64_t end_past_message(std::string_view message, uint64_t offset) {
  const uint8_t* p = reinterpret_cast<const uint8_t*>(message.data());
  const uint64_t n = message.size();
  uint64_t at = offset;
  // A varint at `at`: false when the message ends inside it, else its value.
  auto varint = [&](uint64_t& value) {
    value = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (at >= n) return false;
      uint8_t b = p[at++];
      value |= static_cast<uint64_t>(b & 0x7f) << shift;
      if (b < 0x80) return true;
    }
    value = UINT64_MAX;  // too long: malformed, not cut short
    return true;
  };
  uint64_t key, len;
  if (offset >= n) return 0;
  if (!varint(key)) return n + 1;
  switch (static_cast<WireType>(key & 7)) {
    case WireType::kVarint:
      return varint(len) ? 0 : n + 1;
    case WireType::kFixed64:
      return n - at < 8 ? at + 8 : 0;
    case WireType::kFixed32:
      return n - at < 4 ? at + 4 : 0;
    case WireType::kLen:
      if (!varint(len)) return n + 1;
      if (key == UINT64_MAX || len == UINT64_MAX) return 0;
      return len > n - at ? (len > UINT64_MAX - at ? UINT64_MAX : at + len) : 0;
    default:
      return 0;
  }
}

uint64_t read_varint_slow(const uint8_t*& p, const uint8_t* end, const uint8_t* origin) {
  if (uint64_t v; read_varint_word(p, end, v)) return v;
  const uint8_t* start = p;
  uint64_t result = 0;
  for (int shift = 0; shift < 70; shift += 7) {
    if (p >= end) fail(origin, start, "varint runs past the end of its message");
    uint8_t b = *p++;
    result |= static_cast<uint64_t>(b & 0x7f) << shift;
    if (b < 0x80) return result;
  }
  fail(origin, start, "varint longer than 10 bytes");
}

}  // namespace jaxprof::wire
