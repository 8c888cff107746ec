// Zero-copy protobuf wire-format reader. Length-delimited values are views into the input;
// nothing is allocated. Malformed input throws InputError with the byte offset (relative to the
// `origin` given at construction, normally the start of the file).
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "jaxprof/common/error.h"

namespace jaxprof::wire {

enum class WireType : uint8_t {
  kVarint = 0,
  kFixed64 = 1,
  kLen = 2,
  kStartGroup = 3,
  kEndGroup = 4,
  kFixed32 = 5,
};

// One field. For kVarint/kFixed64/kFixed32 `value` holds the raw bits; for kLen `bytes` holds the
// payload.
struct Field {
  uint32_t number = 0;
  WireType type = WireType::kVarint;
  uint64_t value = 0;
  std::string_view bytes;

  int64_t as_int64() const { return static_cast<int64_t>(value); }
  double as_double() const {
    double d;
    std::memcpy(&d, &value, sizeof d);
    return d;
  }
};

[[noreturn]] void fail(const uint8_t* origin, const uint8_t* at, const char* reason);

// The general case of read_varint: out of line, so that the one-byte case inlines everywhere.
uint64_t read_varint_slow(const uint8_t*& p, const uint8_t* end, const uint8_t* origin);

// Decodes a varint at p (p < end). Advances p. Throws on a varint longer than 10 bytes or one that
// runs past end.
[[gnu::always_inline]] inline uint64_t read_varint(const uint8_t*& p, const uint8_t* end,
                                                   const uint8_t* origin) {
  if (p < end && *p < 0x80) [[likely]]
    return *p++;
  // Two bytes (ids and metadata ids from 128 to 16383) inline too: through the call they were
  // a tenth of the CPU of summarising many hosts.
  if (end - p >= 2 && p[1] < 0x80) {
    const uint64_t v = (p[0] & 0x7fu) | (uint64_t{p[1]} << 7);
    p += 2;
    return v;
  }
  return read_varint_slow(p, end, origin);
}

// Decodes the varint at p from one 8-byte load when 8 bytes are readable and it is at most 8
// bytes long (offsets, durations and ids take 2 to 7), without a branch per byte; false (p
// unmoved) otherwise.
[[gnu::always_inline]] inline bool read_varint_word(const uint8_t*& p, const uint8_t* end,
                                                    uint64_t& out) {
  if (std::endian::native != std::endian::little || end - p < 8) return false;
  uint64_t word;
  std::memcpy(&word, p, 8);
  uint64_t stops = ~word & 0x8080808080808080ull;
  if (!stops) return false;
  // The first byte below 0x80 ends the varint; its 7-bit groups are then packed together.
  int bytes = std::countr_zero(stops) / 8 + 1;
  uint64_t x = bytes == 8 ? word : word & ((uint64_t{1} << (8 * bytes)) - 1);
  x &= 0x7f7f7f7f7f7f7f7full;
  x = (x & 0x007f007f007f007full) | ((x & 0x7f007f007f007f00ull) >> 1);
  x = (x & 0x00003fff00003fffull) | ((x & 0x3fff00003fff0000ull) >> 2);
  x = (x & 0x000000000fffffffull) | ((x & 0x0fffffff00000000ull) >> 4);
  p += bytes;
  out = x;
  return true;
}

// read_varint for values usually several bytes long (offsets and durations in picoseconds):
// inline on the hot paths that read them.
[[gnu::always_inline]] inline uint64_t read_long_varint(const uint8_t*& p, const uint8_t* end,
                                                        const uint8_t* origin) {
  uint64_t v;
  if (read_varint_word(p, end, v)) [[likely]]
    return v;
  return read_varint_slow(p, end, origin);
}

class Reader {
 public:
  Reader() = default;
  Reader(std::string_view message, const uint8_t* origin)
      : p_(reinterpret_cast<const uint8_t*>(message.data())),
        end_(p_ + message.size()),
        origin_(origin) {}

  // Reads the next field into f. Returns false at the end of the message. Inlined: it is the
  // inner loop of every decoder.
  [[gnu::always_inline]] bool next(Field& f) {
    if (p_ >= end_) return false;
    field_start_ = p_;
    uint64_t key = read_varint(p_, end_, origin_);
    f.number = static_cast<uint32_t>(key >> 3);
    f.type = static_cast<WireType>(key & 7);
    if (f.number == 0 || (key >> 3) > 0x1fffffff)
      fail(origin_, field_start_, "invalid field number");
    switch (f.type) {
      case WireType::kVarint:
        f.value = read_varint(p_, end_, origin_);
        return true;
      case WireType::kFixed64:
        if (end_ - p_ < 8) fail(origin_, field_start_, "fixed64 field runs past the end");
        std::memcpy(&f.value, p_, 8);
        p_ += 8;
        return true;
      case WireType::kFixed32: {
        if (end_ - p_ < 4) fail(origin_, field_start_, "fixed32 field runs past the end");
        uint32_t v;
        std::memcpy(&v, p_, 4);
        f.value = v;
        p_ += 4;
        return true;
      }
      case WireType::kLen: {
        uint64_t len = read_varint(p_, end_, origin_);
        if (len > static_cast<uint64_t>(end_ - p_))
          fail(origin_, field_start_,
               "length-delimited field is longer than its enclosing message");
        f.bytes = std::string_view(reinterpret_cast<const char*>(p_), len);
        p_ += len;
        return true;
      }
      default:
        fail(origin_, field_start_, "unsupported wire type (groups or garbage)");
    }
  }

  // Offset (from origin) of the field most recently returned by next().
  int64_t field_offset() const { return field_start_ - origin_; }
  // Offset (from origin) of a view into the input.
  int64_t offset_of(std::string_view v) const {
    return reinterpret_cast<const uint8_t*>(v.data()) - origin_;
  }
  const uint8_t* origin() const { return origin_; }

 private:
  const uint8_t* p_ = nullptr;
  const uint8_t* end_ = nullptr;
  const uint8_t* origin_ = nullptr;
  const uint8_t* field_start_ = nullptr;
};

// Where the field starting at `offset` of `message` declares that it ends, when that is past the
// end of the message (its key, length or payload cut short, as in a file cut off mid-write); 0
// when the field fits or is malformed in another way. A varint cut short ends one byte past.
uint64_t end_past_message(std::string_view message, uint64_t offset);

// Expects field f to have wire type t; throws otherwise (a schema mismatch means a corrupt or
// foreign file).
void expect_type(const Reader& r, const Field& f, WireType t, const char* what);

}  // namespace jaxprof::wire
