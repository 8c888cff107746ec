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
  // Up to 8 bytes without a branch per byte (offsets, durations and ids take 2 to 7): the first
  // byte below 0x80 ends the varint; its 7-bit groups are then packed together.
  if (std::endian::native == std::endian::little && end - p >= 8) {
    uint64_t word;
    std::memcpy(&word, p, 8);
    if (uint64_t stops = ~word & 0x8080808080808080ull) {
      int bytes = std::countr_zero(stops) / 8 + 1;
      uint64_t x = bytes == 8 ? word : word & ((uint64_t{1} << (8 * bytes)) - 1);
      x &= 0x7f7f7f7f7f7f7f7full;
      x = (x & 0x007f007f007f007full) | ((x & 0x7f007f007f007f00ull) >> 1);
      x = (x & 0x00003fff00003fffull) | ((x & 0x3fff00003fff0000ull) >> 2);
      x = (x & 0x000000000fffffffull) | ((x & 0x0fffffff00000000ull) >> 4);
      p += bytes;
      return x;
    }
  }
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
