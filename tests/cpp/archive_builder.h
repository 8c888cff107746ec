// Builds small zip archives and Parquet files byte by byte, so tests can feed the readers exactly
// the layouts (and the corruptions) they need without any writer library.
#pragma once

#include <zlib.h>

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace jaxprof::testing {

inline void put16(std::string& s, uint16_t v) {
  s.push_back(static_cast<char>(v & 0xff));
  s.push_back(static_cast<char>(v >> 8));
}
inline void put32(std::string& s, uint32_t v) {
  for (int i = 0; i < 4; ++i) s.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
inline void put64(std::string& s, uint64_t v) {
  for (int i = 0; i < 8; ++i) s.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

// A zip of stored members.
inline std::string make_zip(const std::vector<std::pair<std::string, std::string>>& members) {
  std::string out, dir;
  for (const auto& [name, data] : members) {
    uint32_t crc = static_cast<uint32_t>(
        crc32(0, reinterpret_cast<const Bytef*>(data.data()), static_cast<uInt>(data.size())));
    uint32_t offset = static_cast<uint32_t>(out.size());
    put32(out, 0x04034b50);
    put16(out, 20), put16(out, 0), put16(out, 0), put16(out, 0), put16(out, 0);
    put32(out, crc), put32(out, static_cast<uint32_t>(data.size())),
        put32(out, static_cast<uint32_t>(data.size()));
    put16(out, static_cast<uint16_t>(name.size())), put16(out, 0);
    out += name;
    out += data;
    put32(dir, 0x02014b50);
    put16(dir, 20), put16(dir, 20), put16(dir, 0), put16(dir, 0), put16(dir, 0), put16(dir, 0);
    put32(dir, crc), put32(dir, static_cast<uint32_t>(data.size())),
        put32(dir, static_cast<uint32_t>(data.size()));
    put16(dir, static_cast<uint16_t>(name.size())), put16(dir, 0), put16(dir, 0);
    put16(dir, 0), put16(dir, 0), put32(dir, 0), put32(dir, offset);
    dir += name;
  }
  uint32_t dir_offset = static_cast<uint32_t>(out.size());
  out += dir;
  put32(out, 0x06054b50);
  put16(out, 0), put16(out, 0);
  put16(out, static_cast<uint16_t>(members.size())),
      put16(out, static_cast<uint16_t>(members.size()));
  put32(out, static_cast<uint32_t>(dir.size())), put32(out, dir_offset), put16(out, 0);
  return out;
}

// Thrift compact protocol writer.
class ThriftWriter {
 public:
  std::string out;
  void varint(uint64_t v) {
    while (v >= 0x80) {
      out.push_back(static_cast<char>((v & 0x7f) | 0x80));
      v >>= 7;
    }
    out.push_back(static_cast<char>(v));
  }
  void zigzag(int64_t v) {
    varint((static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63));
  }
  void field(int16_t id, uint8_t type) {
    int delta = id - last_.back();
    if (delta > 0 && delta <= 15) {
      out.push_back(static_cast<char>(delta << 4 | type));
    } else {
      out.push_back(static_cast<char>(type));
      zigzag(id);
    }
    last_.back() = id;
  }
  void i32(int16_t id, int32_t v) { field(id, 5), zigzag(v); }
  void i64(int16_t id, int64_t v) { field(id, 6), zigzag(v); }
  void boolean(int16_t id, bool v) { field(id, v ? 1 : 2); }
  void binary(int16_t id, const std::string& s) { field(id, 8), varint(s.size()), out += s; }
  void begin(int16_t id) { field(id, 12), last_.push_back(0); }  // struct field
  void begin_element() { last_.push_back(0); }                   // struct in a list
  void end() { out.push_back(0), last_.pop_back(); }
  void list(int16_t id, uint8_t type, uint32_t n) {
    field(id, 9);
    if (n < 15) {
      out.push_back(static_cast<char>(n << 4 | type));
    } else {
      out.push_back(static_cast<char>(0xf0 | type));
      varint(n);
    }
  }

 private:
  std::vector<int16_t> last_{0};
};

// One column of a hand-built Parquet file: its schema and its pages, already encoded.
struct TestColumn {
  std::string name;
  int type;                // physical type
  int repetition = 1;      // 0 required, 1 optional
  bool list = false;       // an optional LIST of `type` elements (3-level layout)
  int64_t num_values = 0;  // level slots over all pages
  std::string pages;       // page headers + bodies
};

inline std::string page_header(int type, int32_t uncompressed, int32_t compressed,
                               int32_t num_values, int32_t encoding, int32_t def_bytes = -1,
                               int32_t rep_bytes = 0, bool v2_compressed = false) {
  ThriftWriter w;
  w.i32(1, type);
  w.i32(2, uncompressed);
  w.i32(3, compressed);
  if (type == 2) {
    w.begin(7), w.i32(1, num_values), w.i32(2, encoding), w.end();
  } else if (type == 0) {
    w.begin(5), w.i32(1, num_values), w.i32(2, encoding), w.i32(3, 3), w.i32(4, 3), w.end();
  } else {
    w.begin(8), w.i32(1, num_values), w.i32(2, 0), w.i32(3, num_values), w.i32(4, encoding);
    w.i32(5, def_bytes), w.i32(6, rep_bytes), w.boolean(7, v2_compressed), w.end();
  }
  w.out.push_back(0);
  return w.out;
}

// RLE run of `count` copies of `value` (levels with bit width <= 8).
inline std::string rle_run(uint32_t count, uint8_t value) {
  ThriftWriter w;
  w.varint(count << 1);
  w.out.push_back(static_cast<char>(value));
  return w.out;
}

// A bit-packed run of 1-bit values (multiple of 8).
inline std::string bitpacked_bits(const std::vector<int>& bits) {
  ThriftWriter w;
  w.varint((bits.size() / 8) << 1 | 1);
  for (size_t i = 0; i < bits.size(); i += 8) {
    uint8_t b = 0;
    for (int k = 0; k < 8; ++k) b |= static_cast<uint8_t>(bits[i + k] << k);
    w.out.push_back(static_cast<char>(b));
  }
  return w.out;
}

inline std::string with_length(const std::string& s) {
  std::string out;
  put32(out, static_cast<uint32_t>(s.size()));
  return out + s;
}

inline std::string make_parquet(const std::vector<TestColumn>& columns, int64_t num_rows,
                                int codec = 0) {
  std::string out = "PAR1";
  std::vector<int64_t> offsets;
  for (const TestColumn& c : columns) {
    offsets.push_back(static_cast<int64_t>(out.size()));
    out += c.pages;
  }
  ThriftWriter w;
  w.i32(1, 1);
  // Schema: root, then per column one leaf (or the 3-level list group).
  size_t elements = 1;
  for (const TestColumn& c : columns) elements += c.list ? 3 : 1;
  w.list(2, 12, static_cast<uint32_t>(elements));
  w.begin_element(), w.binary(4, "schema"), w.i32(5, static_cast<int32_t>(columns.size())), w.end();
  for (const TestColumn& c : columns) {
    if (c.list) {
      w.begin_element(), w.i32(3, 1), w.binary(4, c.name), w.i32(5, 1), w.i32(6, 3), w.end();
      w.begin_element(), w.i32(3, 2), w.binary(4, "list"), w.i32(5, 1), w.end();
      w.begin_element(), w.i32(1, c.type), w.i32(3, 1), w.binary(4, "element"), w.end();
    } else {
      w.begin_element(), w.i32(1, c.type), w.i32(3, c.repetition), w.binary(4, c.name), w.end();
    }
  }
  w.i64(3, num_rows);
  w.list(4, 12, 1);
  w.begin_element();
  w.list(1, 12, static_cast<uint32_t>(columns.size()));
  for (size_t i = 0; i < columns.size(); ++i) {
    const TestColumn& c = columns[i];
    w.begin_element();
    w.i64(2, offsets[i]);
    w.begin(3);
    w.i32(1, c.type);
    w.list(2, 5, 1), w.zigzag(0);
    w.list(3, 8, 1), w.varint(c.name.size()), w.out += c.name;
    w.i32(4, codec);
    w.i64(5, c.num_values);
    w.i64(6, static_cast<int64_t>(c.pages.size()));
    w.i64(7, static_cast<int64_t>(c.pages.size()));
    w.i64(9, offsets[i]);
    w.end();
    w.end();
  }
  w.i64(2, 0);
  w.i64(3, num_rows);
  w.end();
  w.out.push_back(0);
  out += w.out;
  put32(out, static_cast<uint32_t>(w.out.size()));
  out += "PAR1";
  return out;
}

// One column of `values` PLAIN-encoded (`body`) in one v1 data page, of physical type `type`;
// `repetition` 0 required, 1 optional (then `body` starts with the definition levels).
inline TestColumn plain_column(const std::string& name, int type, int repetition, size_t values,
                               const std::string& body) {
  auto n = static_cast<int32_t>(values);
  auto size = static_cast<int32_t>(body.size());
  return TestColumn{name, type, repetition, false, n, page_header(0, size, size, n, 0) + body};
}
inline TestColumn int64_column(const std::string& name, const std::vector<int64_t>& values) {
  std::string body;
  for (int64_t v : values) put64(body, static_cast<uint64_t>(v));
  return plain_column(name, 2, 0, values.size(), body);
}
inline TestColumn string_column(const std::string& name, const std::vector<std::string>& values) {
  std::string body;
  for (const std::string& v : values) {
    put32(body, static_cast<uint32_t>(v.size()));
    body += v;
  }
  return plain_column(name, 6, 0, values.size(), body);
}
// std::nullopt for a null.
inline TestColumn optional_double_column(const std::string& name,
                                         const std::vector<std::optional<double>>& values) {
  std::string levels, body;
  // Definition levels: one RLE run per value (bit width 1).
  for (const auto& v : values) levels += rle_run(1, v ? 1 : 0);
  for (const auto& v : values) {
    if (!v) continue;
    uint64_t bits;
    std::memcpy(&bits, &*v, 8);
    put64(body, bits);
  }
  return plain_column(name, 5, 1, values.size(), with_length(levels) + body);
}

// One NVTX range of an nsys-jax projected trace (the older layout: "TSL:" names, durations).
struct TraceRow {
  std::string name;
  int64_t start_ns, duration_ns;
  double range_id;
  std::optional<double> parent_id;
};

// `nvtx_gpu_proj_trace/trace.parquet` holding `rows`, all on one thread of one process.
inline std::string nsys_trace_parquet(const std::vector<TraceRow>& rows) {
  std::vector<std::string> names;
  std::vector<int64_t> starts, durations, pids;
  std::vector<std::optional<double>> ids, parents;
  for (const TraceRow& r : rows) {
    names.push_back(r.name);
    starts.push_back(r.start_ns);
    durations.push_back(r.duration_ns);
    ids.push_back(r.range_id);
    parents.push_back(r.parent_id);
    pids.push_back(7);
  }
  return make_parquet(
      {string_column("Name", names), int64_column("Projected Start", starts),
       int64_column("Projected Duration", durations), optional_double_column("RangeId", ids),
       optional_double_column("ParentId", parents), int64_column("PID", pids),
       int64_column("TID", pids)},
      static_cast<int64_t>(rows.size()));
}

}  // namespace jaxprof::testing
