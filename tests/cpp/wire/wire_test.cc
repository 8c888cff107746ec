#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "jaxprof/wire/reader.h"

namespace jaxprof {
namespace {

std::string bytes(std::initializer_list<int> b) {
  std::string s;
  for (int x : b) s.push_back(static_cast<char>(x));
  return s;
}

TEST(Wire, ReadsEveryWireType) {
  // field 1 varint 300, field 2 fixed64, field 3 "hi", field 4 fixed32 7
  std::string m =
      bytes({0x08, 0xac, 0x02, 0x11, 1, 0, 0, 0, 0, 0, 0, 0, 0x1a, 2, 'h', 'i', 0x25, 7, 0, 0, 0});
  wire::Reader r(m, reinterpret_cast<const uint8_t*>(m.data()));
  wire::Field f;
  ASSERT_TRUE(r.next(f));
  EXPECT_EQ(f.number, 1u);
  EXPECT_EQ(f.value, 300u);
  ASSERT_TRUE(r.next(f));
  EXPECT_EQ(f.type, wire::WireType::kFixed64);
  EXPECT_EQ(f.value, 1u);
  ASSERT_TRUE(r.next(f));
  EXPECT_EQ(f.bytes, "hi");
  ASSERT_TRUE(r.next(f));
  EXPECT_EQ(f.value, 7u);
  EXPECT_FALSE(r.next(f));
}

// Every varint length, with room after it (the branch-free path) and at the very end of the
// input (the byte-by-byte path), decodes to its value and advances past it.
TEST(Wire, VarintsOfEveryLengthAnywhere) {
  std::vector<uint64_t> values = {0,
                                  1,
                                  127,
                                  128,
                                  300,
                                  16383,
                                  16384,
                                  uint64_t{1} << 35,
                                  (uint64_t{1} << 49) - 1,
                                  uint64_t{1} << 55,
                                  (uint64_t{1} << 56) - 1,
                                  uint64_t{1} << 56,
                                  uint64_t{1} << 63,
                                  ~uint64_t{0}};
  uint64_t x = 0x9e3779b97f4a7c15ull;
  for (int i = 0; i < 2000; ++i) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    values.push_back(x >> (x % 64));
  }
  for (uint64_t v : values) {
    std::string enc;
    for (uint64_t r = v;; r >>= 7) {
      enc.push_back(static_cast<char>((r & 0x7f) | (r >= 0x80 ? 0x80 : 0)));
      if (r < 0x80) break;
    }
    for (size_t tail : {size_t{0}, size_t{9}}) {
      std::string buf = enc + std::string(tail, '\x80');
      const auto* begin = reinterpret_cast<const uint8_t*>(buf.data());
      const uint8_t* p = begin;
      EXPECT_EQ(wire::read_varint(p, begin + buf.size(), begin), v) << v << " tail " << tail;
      EXPECT_EQ(p - begin, static_cast<ptrdiff_t>(enc.size())) << v;
    }
  }
  // Unterminated: past the end, and longer than 10 bytes even with room left.
  std::string open = bytes({0x80, 0x80, 0x80});
  const auto* o = reinterpret_cast<const uint8_t*>(open.data());
  const uint8_t* p = o;
  EXPECT_THROW(wire::read_varint(p, o + open.size(), o), InputError);
  std::string endless(16, '\x80');
  const auto* e = reinterpret_cast<const uint8_t*>(endless.data());
  p = e;
  EXPECT_THROW(wire::read_varint(p, e + endless.size(), e), InputError);
}

TEST(Wire, NegativeInt64IsTenBytes) {
  std::string m = bytes({0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01});
  wire::Reader r(m, reinterpret_cast<const uint8_t*>(m.data()));
  wire::Field f;
  ASSERT_TRUE(r.next(f));
  EXPECT_EQ(f.as_int64(), -1);
}

void expect_error_at(const std::string& m, int64_t offset, const std::string& words) {
  wire::Reader r(m, reinterpret_cast<const uint8_t*>(m.data()));
  wire::Field f;
  try {
    while (r.next(f)) {
    }
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.offset(), offset);
    EXPECT_NE(e.reason().find(words), std::string::npos) << e.reason();
  }
}

TEST(Wire, MalformedInputReportsOffsets) {
  expect_error_at(bytes({0x08}), 1, "varint runs past");
  expect_error_at(bytes({0x08, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01}),
                  1, "longer than 10");
  // A length far beyond the message (an "absurd length").
  expect_error_at(bytes({0x08, 1, 0x12, 0xff, 0xff, 0xff, 0xff, 0x0f, 'x'}), 2, "longer than");
  expect_error_at(bytes({0x0b}), 0, "wire type");
  expect_error_at(bytes({0x00, 0x00}), 0, "field number");
  expect_error_at(bytes({0x11, 1, 2}), 0, "fixed64");
}

}  // namespace
}  // namespace jaxprof
