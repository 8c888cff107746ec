// Protobuf wire-format writer: appends fields to a string. Nested messages are written into a
// child Writer and then length-prefixed, which suits the small messages it is used for.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace jaxprof::wire {

class Writer {
 public:
  void varint(uint32_t field, uint64_t v) {
    tag(field, 0);
    raw_varint(v);
  }
  void int64(uint32_t field, int64_t v) { varint(field, static_cast<uint64_t>(v)); }
  // Zigzag (sint64): small negative numbers stay short.
  void sint64(uint32_t field, int64_t v) {
    varint(field, (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63));
  }
  void fixed64(uint32_t field, uint64_t v) {
    tag(field, 1);
    for (int i = 0; i < 8; ++i) out_.push_back(static_cast<char>(v >> (8 * i)));
  }
  void boolean(uint32_t field, bool v) { varint(field, v ? 1 : 0); }
  void bytes(uint32_t field, std::string_view s) {
    tag(field, 2);
    raw_varint(s.size());
    out_.append(s);
  }
  void message(uint32_t field, const Writer& child) { bytes(field, child.out_); }
  // A packed repeated varint field from `n` values produced by get(i).
  template <typename Get>
  void packed(uint32_t field, size_t n, Get&& get) {
    if (n == 0) return;
    Writer body;
    for (size_t i = 0; i < n; ++i) body.raw_varint(static_cast<uint64_t>(get(i)));
    bytes(field, body.out_);
  }
  const std::string& str() const { return out_; }
  std::string take() { return std::move(out_); }
  // Empties it, keeping its memory: a writer reused per record allocates once.
  void clear() { out_.clear(); }

  // Appends `child` as field `field` of a message being written to `out` (a stream of
  // length-delimited records, as a Trace of TracePackets is).
  static void append_message(std::string& out, uint32_t field, const Writer& child) {
    append_varint(out, (uint64_t{field} << 3) | 2);
    append_varint(out, child.out_.size());
    out.append(child.out_);
  }

 private:
  static void append_varint(std::string& out, uint64_t v) {
    // Into a buffer, then one append: a push_back per byte checks the capacity each time.
    char buf[10];
    size_t n = 0;
    while (v >= 0x80) {
      buf[n++] = static_cast<char>(v | 0x80);
      v >>= 7;
    }
    buf[n++] = static_cast<char>(v);
    out.append(buf, n);
  }
  void tag(uint32_t field, uint32_t type) { raw_varint((uint64_t{field} << 3) | type); }
  void raw_varint(uint64_t v) { append_varint(out_, v); }
  std::string out_;
};

inline int64_t unzigzag(uint64_t v) {
  return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1);
}

}  // namespace jaxprof::wire
