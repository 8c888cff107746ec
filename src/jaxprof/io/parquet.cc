#include "jaxprof/io/parquet.h"

#include <snappy-c.h>

#include <algorithm>
#include <cstring>

#include "jaxprof/common/error.h"
#include "jaxprof/io/buffer.h"
#include "jaxprof/io/thrift_compact.h"

namespace jaxprof {

namespace {

using thrift::CompactReader;

// parquet.thrift enums.
enum Codec : int32_t { kUncompressed = 0, kSnappy = 1, kGzip = 2 };
enum PageType : int32_t { kDataPage = 0, kIndexPage = 1, kDictionaryPage = 2, kDataPageV2 = 3 };
enum Encoding : int32_t {
  kPlain = 0,
  kPlainDictionary = 2,
  kRle = 3,
  kBitPacked = 4,
  kRleDictionary = 8,
};
enum Repetition : int32_t { kRequired = 0, kOptional = 1, kRepeated = 2 };

// Reads a list of structs, calling `element` for each with the reader positioned inside it.
template <typename F>
void read_struct_list(CompactReader& r, uint8_t type, F&& element) {
  if (type != thrift::kList) {
    r.skip(type);
    return;
  }
  uint8_t et;
  uint32_t n;
  r.read_list(et, n);
  for (uint32_t i = 0; i < n; ++i) {
    if (et != thrift::kStruct) {
      r.skip(et);
      continue;
    }
    r.begin_struct();
    element(i);
    r.end_struct();
  }
}

struct SchemaElement {
  int32_t type = -1;  // -1: a group
  int32_t type_length = 0;
  int32_t repetition = kRequired;
  std::string_view name;
  int32_t num_children = 0;
};

struct PageHeader {
  int32_t type = -1;
  int32_t uncompressed_size = 0;
  int32_t compressed_size = 0;
  int32_t num_values = 0;
  int32_t encoding = 0;
  int32_t definition_encoding = kRle;
  int32_t repetition_encoding = kRle;
  int32_t definition_bytes = 0;  // v2
  int32_t repetition_bytes = 0;  // v2
  bool v2_compressed = true;
};

// The values of a dictionary page, widened like the column.
struct Dictionary {
  std::vector<int64_t> ints;
  std::vector<double> doubles;
  std::vector<std::string_view> strings;
  size_t size() const { return std::max({ints.size(), doubles.size(), strings.size()}); }
};

class PageDecoder {
 public:
  PageDecoder(const std::string& file, const char* origin) : file_(file), origin_(origin) {}

  [[noreturn]] void fail(const char* at, const std::string& reason) const {
    throw InputError(file_, reason, at ? static_cast<int64_t>(at - origin_) : -1);
  }

  // RLE / bit-packed hybrid values of `bit_width` bits into out[0..count).
  void hybrid(const char*& p, const char* end, int bit_width, uint32_t count, uint32_t* out,
              const char* at) const {
    if (bit_width < 0 || bit_width > 32) fail(at, "invalid bit width in RLE data");
    uint32_t done = 0;
    const uint64_t mask = bit_width == 32 ? 0xffffffffull : ((uint64_t{1} << bit_width) - 1);
    while (done < count) {
      uint64_t header = 0;
      for (int shift = 0;; shift += 7) {
        if (p >= end || shift > 63) fail(at, "truncated RLE run header");
        uint8_t b = static_cast<uint8_t>(*p++);
        header |= static_cast<uint64_t>(b & 0x7f) << shift;
        if (!(b & 0x80)) break;
      }
      if (header & 1) {
        uint64_t values = (header >> 1) * 8;
        uint64_t bytes = (header >> 1) * static_cast<uint64_t>(bit_width);
        uint64_t take = std::min<uint64_t>(values, count - done);
        uint64_t need = (take * static_cast<uint64_t>(bit_width) + 7) / 8;
        if (need > static_cast<uint64_t>(end - p)) fail(at, "truncated bit-packed run");
        uint64_t buf = 0;
        int bits = 0;
        const uint8_t* q = reinterpret_cast<const uint8_t*>(p);
        for (uint64_t i = 0; i < take; ++i) {
          while (bits < bit_width) {
            buf |= static_cast<uint64_t>(*q++) << bits;
            bits += 8;
          }
          out[done++] = static_cast<uint32_t>(buf & mask);
          buf >>= bit_width;
          bits -= bit_width;
        }
        p += std::min<uint64_t>(bytes, static_cast<uint64_t>(end - p));
      } else {
        uint64_t run = header >> 1;
        int width = (bit_width + 7) / 8;
        if (width > end - p) fail(at, "truncated RLE run");
        uint32_t v = 0;
        for (int i = 0; i < width; ++i)
          v |= static_cast<uint32_t>(static_cast<uint8_t>(p[i])) << (8 * i);
        p += width;
        if (run == 0) fail(at, "empty RLE run");
        uint64_t take = std::min<uint64_t>(run, count - done);
        std::fill(out + done, out + done + take, v);
        done += static_cast<uint32_t>(take);
      }
    }
  }

  // Levels of a v1 page: 4-byte length, then hybrid data.
  void levels_v1(const char*& p, const char* end, int max_level, uint32_t count, int32_t encoding,
                 std::vector<uint32_t>& out, const char* at) const {
    if (encoding != kRle) fail(at, "unsupported level encoding " + std::to_string(encoding));
    if (end - p < 4) fail(at, "truncated level data");
    uint32_t len;
    std::memcpy(&len, p, 4);
    p += 4;
    if (len > static_cast<uint64_t>(end - p)) fail(at, "level data longer than its page");
    const char* q = p;
    out.resize(count);
    hybrid(q, p + len, bit_width(max_level), count, out.data(), at);
    p += len;
  }

  static int bit_width(int max_level) {
    int w = 0;
    while ((1 << w) <= max_level) ++w;
    return w;
  }

 private:
  const std::string& file_;
  const char* origin_;
};

template <typename T>
T load(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

}  // namespace

std::vector<std::pair<uint32_t, uint32_t>> ParquetColumn::rows() const {
  std::vector<std::pair<uint32_t, uint32_t>> out;
  for (uint32_t i = 0; i < valid.size(); ++i) {
    if (repetition.empty() || repetition[i] == 0) {
      if (!out.empty()) out.back().second = i;
      out.emplace_back(i, i);
    }
  }
  if (!out.empty()) out.back().second = static_cast<uint32_t>(valid.size());
  return out;
}

ParquetFile::ParquetFile(std::string_view bytes, std::string name, ParquetLimits limits)
    : bytes_(bytes), name_(std::move(name)), limits_(limits) {
  const char* origin = bytes.data();
  if (bytes.size() >= 4 && bytes.substr(0, 4) == "PAR1" &&
      (bytes.size() < 12 || bytes.substr(bytes.size() - 4) != "PAR1"))
    // The footer comes last: a file cut short has the magic at its start only.
    throw truncated_input(name_, "its Parquet footer (written at the end of the file) is missing",
                          static_cast<int64_t>(bytes.size()), bytes.size());
  if (bytes.size() < 12 || bytes.substr(0, 4) != "PAR1" || bytes.substr(bytes.size() - 4) != "PAR1")
    throw InputError(name_, "not a Parquet file (no PAR1 magic at both ends)", 0);
  uint32_t footer_len = load<uint32_t>(bytes.data() + bytes.size() - 8);
  if (footer_len > bytes.size() - 12)
    throw InputError(name_, "Parquet footer length exceeds the file",
                     static_cast<int64_t>(bytes.size() - 8));
  std::string_view footer = bytes.substr(bytes.size() - 8 - footer_len, footer_len);

  std::vector<SchemaElement> schema;
  try {
    CompactReader r(footer, origin);
    int16_t id;
    uint8_t type;
    r.begin_struct();
    while (r.next_field(id, type)) {
      if (id == 2) {  // schema
        read_struct_list(r, type, [&](uint32_t) {
          SchemaElement& e = schema.emplace_back();
          int16_t fid;
          uint8_t ft;
          while (r.next_field(fid, ft)) {
            switch (fid) {
              case 1:
                e.type = r.read_i32();
                break;
              case 2:
                e.type_length = r.read_i32();
                break;
              case 3:
                e.repetition = r.read_i32();
                break;
              case 4:
                e.name = r.read_binary();
                break;
              case 5:
                e.num_children = r.read_i32();
                break;
              default:
                r.skip(ft);
            }
          }
        });
      } else if (id == 3 && type == thrift::kI64) {
        num_rows_ = r.read_i64();
      } else if (id == 4) {  // row groups
        read_struct_list(r, type, [&](uint32_t) {
          int16_t fid;
          uint8_t ft;
          while (r.next_field(fid, ft)) {
            if (fid != 1) {
              r.skip(ft);
              continue;
            }
            read_struct_list(r, ft, [&](uint32_t column) {
              if (chunks_.size() <= column) chunks_.resize(column + 1);
              Chunk& c = chunks_[column].emplace_back();
              int16_t cid;
              uint8_t ct;
              while (r.next_field(cid, ct)) {
                if (cid == 1 && ct == thrift::kBinary) {
                  if (!r.read_binary().empty())
                    throw InputError(name_, "Parquet columns in other files are not supported");
                  continue;
                }
                if (cid != 3 || ct != thrift::kStruct) {
                  r.skip(ct);
                  continue;
                }
                r.begin_struct();
                int16_t mid;
                uint8_t mt;
                while (r.next_field(mid, mt)) {
                  switch (mid) {
                    case 4:
                      c.codec = r.read_i32();
                      break;
                    case 5:
                      c.num_values = r.read_i64();
                      break;
                    case 7:
                      c.total_compressed = r.read_i64();
                      break;
                    case 9:
                      c.data_offset = r.read_i64();
                      break;
                    case 11:
                      c.dictionary_offset = r.read_i64();
                      break;
                    default:
                      r.skip(mt);
                  }
                }
                r.end_struct();
              }
            });
          }
        });
      } else {
        r.skip(type);
      }
    }
  } catch (const InputError& e) {
    if (!e.file().empty()) throw;
    throw InputError(name_, e.reason() + " (Parquet footer)", e.offset());
  }

  // Leaves of the schema tree, depth first; the root (element 0) is the table itself.
  if (schema.empty()) throw InputError(name_, "Parquet file has no schema");
  struct Frame {
    int remaining;
    int16_t def, rep;
    std::string path, top;
  };
  std::vector<Frame> stack{{schema[0].num_children, 0, 0, "", ""}};
  for (size_t i = 1; i < schema.size(); ++i) {
    while (!stack.empty() && stack.back().remaining == 0) stack.pop_back();
    if (stack.empty() || stack.size() > 32)
      throw InputError(name_, "malformed Parquet schema tree");
    Frame& parent = stack.back();
    --parent.remaining;
    const SchemaElement& e = schema[i];
    int16_t def = parent.def + (e.repetition != kRequired ? 1 : 0);
    int16_t rep = parent.rep + (e.repetition == kRepeated ? 1 : 0);
    std::string path =
        parent.path.empty() ? std::string(e.name) : parent.path + "." + std::string(e.name);
    std::string top = parent.top.empty() ? std::string(e.name) : parent.top;
    if (e.num_children > 0) {
      if (e.num_children > static_cast<int32_t>(schema.size()))
        throw InputError(name_, "malformed Parquet schema tree");
      stack.push_back({e.num_children, def, rep, path, top});
      continue;
    }
    if (e.type < 0 || e.type > 7) throw InputError(name_, "Parquet column without a physical type");
    // Zero-byte values would let a page declare 2^27 of them in no bytes at all.
    if (static_cast<ParquetType>(e.type) == ParquetType::kFixedLenByteArray && e.type_length <= 0)
      throw InputError(name_, "Parquet FIXED_LEN_BYTE_ARRAY column '" + path +
                                  "' without a positive type_length");
    columns_.push_back({path, top, static_cast<ParquetType>(e.type), e.type_length, def, rep});
  }
  if (chunks_.size() > columns_.size())
    throw InputError(name_, "Parquet row groups have more columns than the schema");
  chunks_.resize(columns_.size());
  for (auto& cs : chunks_)
    for (const Chunk& c : cs)
      if (c.data_offset < 4 || c.total_compressed < 0 ||
          static_cast<uint64_t>(c.data_offset) >= bytes.size() ||
          c.dictionary_offset >= static_cast<int64_t>(bytes.size()) || c.num_values < 0)
        throw InputError(name_, "Parquet column chunk points outside the file");
}

int ParquetFile::find(std::string_view path) const {
  for (size_t i = 0; i < columns_.size(); ++i)
    if (columns_[i].path == path) return static_cast<int>(i);
  // A list column by its field name: the single leaf under it.
  int found = -1;
  for (size_t i = 0; i < columns_.size(); ++i) {
    if (columns_[i].name != path) continue;
    if (found >= 0) return -1;
    found = static_cast<int>(i);
  }
  return found;
}

ParquetColumn ParquetFile::read(int column) const {
  const ParquetColumnInfo& info = columns_.at(column);
  ParquetColumn out;
  out.type = info.type;
  for (const Chunk& c : chunks_[column]) read_chunk(info, c, out);
  return out;
}

void ParquetFile::read_chunk(const ParquetColumnInfo& info, const Chunk& chunk,
                             ParquetColumn& out) const {
  const char* origin = bytes_.data();
  PageDecoder dec(name_, origin);
  const std::string where = " in column '" + info.path + "'";
  auto fail = [&](const char* at, const std::string& reason) { dec.fail(at, reason + where); };
  if (info.type == ParquetType::kInt96) fail(nullptr, "INT96 values are not supported");

  int64_t start = chunk.data_offset;
  if (chunk.dictionary_offset > 0 && chunk.dictionary_offset < start)
    start = chunk.dictionary_offset;
  const char* p = origin + start;
  const char* const file_end = origin + bytes_.size() - 8;
  const char* chunk_end = chunk.total_compressed > 0 && chunk.total_compressed <= file_end - p
                              ? p + chunk.total_compressed
                              : file_end;
  if (static_cast<uint64_t>(chunk.num_values) + out.valid.size() > limits_.max_values)
    fail(p, "column has more values than the reader allows (" + std::to_string(limits_.max_values) +
                ")");

  const bool strings =
      info.type == ParquetType::kByteArray || info.type == ParquetType::kFixedLenByteArray;
  const bool floats = info.type == ParquetType::kFloat || info.type == ParquetType::kDouble;
  Dictionary dict;
  std::vector<uint32_t> defs, reps, indices;
  int64_t values_left = chunk.num_values;

  while (values_left > 0) {
    if (p >= chunk_end) fail(p, "column chunk ends before its values (truncated file?)");
    const char* page_at = p;
    PageHeader h;
    try {
      CompactReader r(std::string_view(p, chunk_end - p), origin);
      r.begin_struct();
      int16_t id;
      uint8_t t;
      while (r.next_field(id, t)) {
        switch (id) {
          case 1:
            h.type = r.read_i32();
            break;
          case 2:
            h.uncompressed_size = r.read_i32();
            break;
          case 3:
            h.compressed_size = r.read_i32();
            break;
          case 5:
          case 7:
          case 8: {
            if (t != thrift::kStruct) {
              r.skip(t);
              break;
            }
            r.begin_struct();
            int16_t sid;
            uint8_t st;
            while (r.next_field(sid, st)) {
              if (id == 5) {  // DataPageHeader
                switch (sid) {
                  case 1:
                    h.num_values = r.read_i32();
                    break;
                  case 2:
                    h.encoding = r.read_i32();
                    break;
                  case 3:
                    h.definition_encoding = r.read_i32();
                    break;
                  case 4:
                    h.repetition_encoding = r.read_i32();
                    break;
                  default:
                    r.skip(st);
                }
              } else if (id == 7) {  // DictionaryPageHeader
                switch (sid) {
                  case 1:
                    h.num_values = r.read_i32();
                    break;
                  case 2:
                    h.encoding = r.read_i32();
                    break;
                  default:
                    r.skip(st);
                }
              } else {  // DataPageHeaderV2
                switch (sid) {
                  case 1:
                    h.num_values = r.read_i32();
                    break;
                  case 4:
                    h.encoding = r.read_i32();
                    break;
                  case 5:
                    h.definition_bytes = r.read_i32();
                    break;
                  case 6:
                    h.repetition_bytes = r.read_i32();
                    break;
                  case 7:
                    h.v2_compressed = CompactReader::field_bool(st);
                    break;
                  default:
                    r.skip(st);
                }
              }
            }
            r.end_struct();
            break;
          }
          default:
            r.skip(t);
        }
      }
      p = r.position();
    } catch (const InputError& e) {
      if (!e.file().empty()) throw;
      fail(page_at, e.reason() + " (page header)");
    }
    if (h.compressed_size < 0 || h.uncompressed_size < 0 || h.num_values < 0 ||
        h.compressed_size > chunk_end - p)
      fail(page_at, "page size out of bounds (truncated or corrupt file)");
    std::string_view raw(p, static_cast<size_t>(h.compressed_size));
    p += h.compressed_size;
    if (h.type == kIndexPage) continue;
    if (h.type != kDataPage && h.type != kDataPageV2 && h.type != kDictionaryPage) continue;
    if (static_cast<uint64_t>(h.uncompressed_size) > limits_.max_page_bytes)
      fail(page_at, "page larger than the reader allows");

    // v2 pages keep their levels uncompressed in front of the (maybe compressed) values.
    size_t level_bytes = 0;
    bool compressed = chunk.codec != kUncompressed;
    if (h.type == kDataPageV2) {
      if (h.definition_bytes < 0 || h.repetition_bytes < 0 ||
          static_cast<uint64_t>(h.definition_bytes) + h.repetition_bytes > raw.size())
        fail(page_at, "v2 page levels longer than the page");
      level_bytes = static_cast<size_t>(h.definition_bytes) + h.repetition_bytes;
      compressed = compressed && h.v2_compressed;
    }
    std::string_view body = raw.substr(level_bytes);
    std::unique_ptr<std::vector<uint8_t>> owned;
    if (compressed) {
      size_t expect = static_cast<size_t>(h.uncompressed_size) - level_bytes;
      if (static_cast<size_t>(h.uncompressed_size) < level_bytes)
        fail(page_at, "page sizes disagree");
      owned = std::make_unique<std::vector<uint8_t>>();
      if (chunk.codec == kSnappy) {
        size_t n = 0;
        if (snappy_uncompressed_length(body.data(), body.size(), &n) != SNAPPY_OK || n != expect)
          fail(page_at, "corrupt Snappy page");
        // Snappy expands by at most 64 bytes per 3-byte copy: a page claiming more is damaged,
        // and must not make us allocate what it claims.
        if (n / 22 > body.size())
          fail(page_at, "Snappy page claims " + std::to_string(n) + " bytes from " +
                            std::to_string(body.size()) + ", more than Snappy can expand to");
        owned->resize(n);
        if (snappy_uncompress(body.data(), body.size(), reinterpret_cast<char*>(owned->data()),
                              &n) != SNAPPY_OK ||
            n != expect)
          fail(page_at, "corrupt Snappy page");
      } else if (chunk.codec == kGzip) {
        *owned = gunzip(body, name_, expect);
        if (owned->size() != expect) fail(page_at, "gzip page size disagrees with its header");
      } else {
        fail(page_at, "unsupported Parquet compression codec " + std::to_string(chunk.codec) +
                          " (supported: none, Snappy, gzip)");
      }
      body = std::string_view(reinterpret_cast<const char*>(owned->data()), owned->size());
    }
    const char* v = body.data();
    const char* vend = body.data() + body.size();
    const char* at = compressed ? page_at : v;  // offsets inside decompressed data mean little

    uint32_t n = static_cast<uint32_t>(h.num_values);
    if (h.type == kDictionaryPage) {
      if (h.encoding != kPlain && h.encoding != kPlainDictionary)
        fail(page_at, "unsupported dictionary encoding " + std::to_string(h.encoding));
      dict = Dictionary();
      for (uint32_t i = 0; i < n; ++i) {
        switch (info.type) {
          case ParquetType::kInt32:
            if (vend - v < 4) fail(at, "truncated dictionary");
            dict.ints.push_back(load<int32_t>(v));
            v += 4;
            break;
          case ParquetType::kInt64:
            if (vend - v < 8) fail(at, "truncated dictionary");
            dict.ints.push_back(load<int64_t>(v));
            v += 8;
            break;
          case ParquetType::kFloat:
            if (vend - v < 4) fail(at, "truncated dictionary");
            dict.doubles.push_back(load<float>(v));
            v += 4;
            break;
          case ParquetType::kDouble:
            if (vend - v < 8) fail(at, "truncated dictionary");
            dict.doubles.push_back(load<double>(v));
            v += 8;
            break;
          case ParquetType::kByteArray: {
            if (vend - v < 4) fail(at, "truncated dictionary");
            uint32_t len = load<uint32_t>(v);
            v += 4;
            if (len > static_cast<uint64_t>(vend - v)) fail(at, "truncated dictionary string");
            dict.strings.emplace_back(v, len);
            v += len;
            break;
          }
          case ParquetType::kFixedLenByteArray: {
            if (info.type_length < 0 || info.type_length > vend - v)
              fail(at, "truncated dictionary");
            dict.strings.emplace_back(v, info.type_length);
            v += info.type_length;
            break;
          }
          default:
            fail(at, "unsupported dictionary value type");
        }
      }
      if (owned && strings) out.pages.push_back(std::move(owned));
      continue;
    }

    // A data page: levels, then the values that are present.
    if (n > values_left) fail(page_at, "pages hold more values than the column chunk declares");
    values_left -= n;
    if (info.max_repetition > 0) {
      if (h.type == kDataPageV2) {
        const char* q = raw.data();
        reps.resize(n);
        dec.hybrid(q, q + h.repetition_bytes, PageDecoder::bit_width(info.max_repetition), n,
                   reps.data(), page_at);
      } else {
        dec.levels_v1(v, vend, info.max_repetition, n, h.repetition_encoding, reps, at);
      }
    }
    if (info.max_definition > 0) {
      if (h.type == kDataPageV2) {
        const char* q = raw.data() + h.repetition_bytes;
        defs.resize(n);
        dec.hybrid(q, q + h.definition_bytes, PageDecoder::bit_width(info.max_definition), n,
                   defs.data(), page_at);
      } else {
        dec.levels_v1(v, vend, info.max_definition, n, h.definition_encoding, defs, at);
      }
    }
    size_t base = out.valid.size();
    out.valid.resize(base + n, 1);
    uint32_t present = n;
    if (info.max_definition > 0) {
      present = 0;
      for (uint32_t i = 0; i < n; ++i) {
        if (defs[i] > static_cast<uint32_t>(info.max_definition))
          fail(at, "definition level above the schema's maximum");
        bool ok = defs[i] == static_cast<uint32_t>(info.max_definition);
        out.valid[base + i] = ok;
        present += ok;
      }
      if (info.max_definition > 1 || info.max_repetition > 0)
        for (uint32_t i = 0; i < n; ++i) out.definition.push_back(static_cast<int16_t>(defs[i]));
    }
    if (info.max_repetition > 0)
      for (uint32_t i = 0; i < n; ++i) {
        if (reps[i] > static_cast<uint32_t>(info.max_repetition))
          fail(at, "repetition level above the schema's maximum");
        out.repetition.push_back(static_cast<int16_t>(reps[i]));
      }
    if (strings)
      out.strings.resize(base + n);
    else if (floats)
      out.doubles.resize(base + n, 0.0);
    else
      out.ints.resize(base + n, 0);

    // Slot of the k-th present value.
    uint32_t slot = 0;
    auto next_slot = [&]() {
      while (!out.valid[base + slot]) ++slot;
      return base + slot++;
    };

    if (h.encoding == kPlainDictionary || h.encoding == kRleDictionary) {
      if (present > 0) {
        if (v >= vend) fail(at, "truncated dictionary indices");
        int width = static_cast<uint8_t>(*v++);
        indices.resize(present);
        dec.hybrid(v, vend, width, present, indices.data(), at);
        size_t dn = dict.size();
        for (uint32_t k = 0; k < present; ++k) {
          uint32_t ix = indices[k];
          if (ix >= dn) fail(at, "dictionary index out of range");
          size_t s = next_slot();
          if (strings)
            out.strings[s] = dict.strings[ix];
          else if (floats)
            out.doubles[s] = dict.doubles[ix];
          else
            out.ints[s] = dict.ints[ix];
        }
      }
    } else if (h.encoding == kPlain) {
      if (info.type == ParquetType::kBoolean) {
        if ((static_cast<uint64_t>(present) + 7) / 8 > static_cast<uint64_t>(vend - v))
          fail(at, "truncated boolean values");
        for (uint32_t k = 0; k < present; ++k)
          out.ints[next_slot()] = (static_cast<uint8_t>(v[k / 8]) >> (k % 8)) & 1;
      } else {
        for (uint32_t k = 0; k < present; ++k) {
          size_t s = next_slot();
          switch (info.type) {
            case ParquetType::kInt32:
              if (vend - v < 4) fail(at, "truncated values");
              out.ints[s] = load<int32_t>(v);
              v += 4;
              break;
            case ParquetType::kInt64:
              if (vend - v < 8) fail(at, "truncated values");
              out.ints[s] = load<int64_t>(v);
              v += 8;
              break;
            case ParquetType::kFloat:
              if (vend - v < 4) fail(at, "truncated values");
              out.doubles[s] = load<float>(v);
              v += 4;
              break;
            case ParquetType::kDouble:
              if (vend - v < 8) fail(at, "truncated values");
              out.doubles[s] = load<double>(v);
              v += 8;
              break;
            case ParquetType::kByteArray: {
              if (vend - v < 4) fail(at, "truncated values");
              uint32_t len = load<uint32_t>(v);
              v += 4;
              if (len > static_cast<uint64_t>(vend - v)) fail(at, "truncated string value");
              out.strings[s] = std::string_view(v, len);
              v += len;
              break;
            }
            case ParquetType::kFixedLenByteArray:
              if (info.type_length < 0 || info.type_length > vend - v) fail(at, "truncated values");
              out.strings[s] = std::string_view(v, info.type_length);
              v += info.type_length;
              break;
            default:
              fail(at, "unsupported value type");
          }
        }
      }
    } else if (h.encoding == kRle && info.type == ParquetType::kBoolean) {
      if (vend - v < 4) fail(at, "truncated boolean values");
      v += 4;  // length prefix
      indices.resize(present);
      dec.hybrid(v, vend, 1, present, indices.data(), at);
      for (uint32_t k = 0; k < present; ++k) out.ints[next_slot()] = indices[k];
    } else {
      fail(page_at, "unsupported Parquet encoding " + std::to_string(h.encoding) +
                        " (supported: PLAIN, dictionary, RLE)");
    }
    if (owned && strings) out.pages.push_back(std::move(owned));
  }
}

}  // namespace jaxprof
