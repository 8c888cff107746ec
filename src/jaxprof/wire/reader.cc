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
