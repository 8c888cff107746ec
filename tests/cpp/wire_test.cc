#include <gtest/gtest.h>

#include <string>

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
