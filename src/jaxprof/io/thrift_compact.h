// A reader for the Thrift compact protocol, enough for Parquet's footer and page headers: fields,
// integers (zigzag varints), binary, lists and nested structs; anything else is skipped. Every
// read is bounds-checked and throws InputError with the offset from the start of the buffer.
#pragma once

#include <cstdint>
#include <string_view>

namespace jaxprof::thrift {

// Compact-protocol type codes.
enum Type : uint8_t {
  kStop = 0,
  kBoolTrue = 1,
  kBoolFalse = 2,
  kByte = 3,
  kI16 = 4,
  kI32 = 5,
  kI64 = 6,
  kDouble = 7,
  kBinary = 8,
  kList = 9,
  kSet = 10,
  kMap = 11,
  kStruct = 12,
};

class CompactReader {
 public:
  // `origin` is where offsets in error messages count from.
  CompactReader(std::string_view bytes, const char* origin);

  // Reads the next field header of the current struct; false at its end (the stop field).
  bool next_field(int16_t& id, uint8_t& type);
  // Enters / leaves a nested struct value (field ids restart from zero inside).
  void begin_struct();
  void end_struct();

  int64_t read_i64();  // also reads i32, i16 and byte values
  int32_t read_i32();
  double read_double();
  std::string_view read_binary();
  // A bool field carries its value in the type; list elements carry a byte.
  static bool field_bool(uint8_t type) { return type == kBoolTrue; }
  bool read_list_bool();
  // A list (or set) header: its element type and size.
  void read_list(uint8_t& element_type, uint32_t& size);
  void skip(uint8_t type);

  size_t offset() const { return static_cast<size_t>(p_ - origin_); }
  const char* position() const { return p_; }

 private:
  uint64_t varint();
  void skip_value(uint8_t type, int depth);
  [[noreturn]] void fail(const char* reason) const;

  const char* p_;
  const char* end_;
  const char* origin_;
  int16_t last_id_ = 0;
  int16_t stack_[64];
  int depth_ = 0;
};

}  // namespace jaxprof::thrift
