// The pages of a Parquet column chunk: page headers, decompression, the dictionary page, the
// definition and repetition levels of data pages, and their values (PLAIN, dictionary indices,
// RLE booleans), widened into a ParquetColumn. The footer and the schema are read in parquet.cc.
#include <snappy-c.h>

#include <algorithm>
#include <cstring>

#include "jaxprof/common/error.h"
#include "jaxprof/io/buffer.h"
#include "jaxprof/io/parquet.h"
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

// The fields of a DataPageHeader, the reader inside it.
void read_data_page_header(CompactReader& r, PageHeader& h) {
  int16_t id;
  uint8_t t;
  while (r.next_field(id, t)) {
    switch (id) {
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
        r.skip(t);
    }
  }
}

// The fields of a DictionaryPageHeader, the reader inside it.
void read_dictionary_page_header(CompactReader& r, PageHeader& h) {
  int16_t id;
  uint8_t t;
  while (r.next_field(id, t)) {
    switch (id) {
      case 1:
        h.num_values = r.read_i32();
        break;
      case 2:
        h.encoding = r.read_i32();
        break;
      default:
        r.skip(t);
    }
  }
}

// The fields of a DataPageHeaderV2, the reader inside it.
void read_data_page_header_v2(CompactReader& r, PageHeader& h) {
  int16_t id;
  uint8_t t;
  while (r.next_field(id, t)) {
    switch (id) {
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
        h.v2_compressed = CompactReader::field_bool(t);
        break;
      default:
        r.skip(t);
    }
  }
}

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

// The slots of a data page's present values, in order: a null takes a slot but holds no value.
class PresentSlots {
 public:
  PresentSlots(const std::vector<uint8_t>& valid, size_t base) : valid_(valid), base_(base) {}
  size_t next() {
    while (!valid_[base_ + slot_]) ++slot_;
    return base_ + slot_++;
  }

 private:
  const std::vector<uint8_t>& valid_;
  size_t base_;
  uint32_t slot_ = 0;
};

// The values of a page after its header (and after a v2 page's levels), decompressed when the
// chunk's codec applies to them.
struct PageValues {
  std::string_view body;
  std::unique_ptr<std::vector<uint8_t>> owned;  // the decompressed bytes, when decompressed
  bool compressed = false;
};

// Reads the pages of one column chunk into `out`, keeping the dictionary and the buffers of
// levels and indices from one page to the next.
class ChunkReader {
 public:
  ChunkReader(std::string_view bytes, const std::string& name, const ParquetLimits& limits,
              const ParquetColumnInfo& info, ParquetColumn& out)
      : bytes_(bytes),
        name_(name),
        limits_(limits),
        info_(info),
        out_(out),
        dec_(name, bytes.data()),
        where_(" in column '" + info.path + "'"),
        strings_(info.type == ParquetType::kByteArray ||
                 info.type == ParquetType::kFixedLenByteArray),
        floats_(info.type == ParquetType::kFloat || info.type == ParquetType::kDouble) {}

  void read(const ParquetFile::Chunk& chunk);

 private:
  [[noreturn]] void fail(const char* at, const std::string& reason) const {
    dec_.fail(at, reason + where_);
  }
  // Parses the page header at `p` and moves `p` past it.
  PageHeader page_header(const char*& p, const char* chunk_end) const;
  PageValues page_values(const PageHeader& h, std::string_view raw, int32_t codec,
                         const char* page_at) const;
  std::unique_ptr<std::vector<uint8_t>> decompress(int32_t codec, std::string_view body,
                                                   size_t expect, const char* page_at) const;
  void dictionary_page(const PageHeader& h, const char* v, const char* vend, const char* at,
                       const char* page_at);
  void data_page(const PageHeader& h, std::string_view raw, const char* v, const char* vend,
                 const char* at, const char* page_at);
  void read_levels(const PageHeader& h, std::string_view raw, const char*& v, const char* vend,
                   const char* at, const char* page_at);
  uint32_t apply_levels(uint32_t n, size_t base, const char* at);
  void dictionary_values(const char* v, const char* vend, uint32_t present, PresentSlots& slots,
                         const char* at);
  void plain_values(const char* v, const char* vend, uint32_t present, PresentSlots& slots,
                    const char* at);
  void rle_booleans(const char* v, const char* vend, uint32_t present, PresentSlots& slots,
                    const char* at);

  std::string_view bytes_;
  const std::string& name_;
  const ParquetLimits& limits_;
  const ParquetColumnInfo& info_;
  ParquetColumn& out_;
  PageDecoder dec_;
  const std::string where_;
  const bool strings_;
  const bool floats_;
  Dictionary dict_;
  std::vector<uint32_t> defs_, reps_, indices_;
};

void ChunkReader::read(const ParquetFile::Chunk& chunk) {
  const char* origin = bytes_.data();
  if (info_.type == ParquetType::kInt96) fail(nullptr, "INT96 values are not supported");

  int64_t start = chunk.data_offset;
  if (chunk.dictionary_offset > 0 && chunk.dictionary_offset < start)
    start = chunk.dictionary_offset;
  const char* p = origin + start;
  const char* const file_end = origin + bytes_.size() - 8;
  const char* chunk_end = chunk.total_compressed > 0 && chunk.total_compressed <= file_end - p
                              ? p + chunk.total_compressed
                              : file_end;
  if (static_cast<uint64_t>(chunk.num_values) + out_.valid.size() > limits_.max_values)
    fail(p, "column has more values than the reader allows (" + std::to_string(limits_.max_values) +
                ")");

  int64_t values_left = chunk.num_values;
  while (values_left > 0) {
    if (p >= chunk_end) fail(p, "column chunk ends before its values (truncated file?)");
    const char* page_at = p;
    PageHeader h = page_header(p, chunk_end);
    if (h.compressed_size < 0 || h.uncompressed_size < 0 || h.num_values < 0 ||
        h.compressed_size > chunk_end - p)
      fail(page_at, "page size out of bounds (truncated or corrupt file)");
    std::string_view raw(p, static_cast<size_t>(h.compressed_size));
    p += h.compressed_size;
    if (h.type == kIndexPage) continue;
    if (h.type != kDataPage && h.type != kDataPageV2 && h.type != kDictionaryPage) continue;
    if (static_cast<uint64_t>(h.uncompressed_size) > limits_.max_page_bytes)
      fail(page_at, "page larger than the reader allows");

    PageValues values = page_values(h, raw, chunk.codec, page_at);
    const char* v = values.body.data();
    const char* vend = values.body.data() + values.body.size();
    // Offsets inside decompressed data mean little: errors there point at the page.
    const char* at = values.compressed ? page_at : v;

    if (h.type == kDictionaryPage) {
      dictionary_page(h, v, vend, at, page_at);
    } else {
      uint32_t n = static_cast<uint32_t>(h.num_values);
      if (n > values_left) fail(page_at, "pages hold more values than the column chunk declares");
      values_left -= n;
      data_page(h, raw, v, vend, at, page_at);
    }
    // String values point into the decompressed bytes: the column keeps them.
    if (values.owned && strings_) out_.pages.push_back(std::move(values.owned));
  }
}

PageHeader ChunkReader::page_header(const char*& p, const char* chunk_end) const {
  const char* page_at = p;
  PageHeader h;
  try {
    CompactReader r(std::string_view(p, chunk_end - p), bytes_.data());
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
          if (id == 5)
            read_data_page_header(r, h);
          else if (id == 7)
            read_dictionary_page_header(r, h);
          else
            read_data_page_header_v2(r, h);
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
  return h;
}

PageValues ChunkReader::page_values(const PageHeader& h, std::string_view raw, int32_t codec,
                                    const char* page_at) const {
  // v2 pages keep their levels uncompressed in front of the (maybe compressed) values.
  size_t level_bytes = 0;
  bool compressed = codec != kUncompressed;
  if (h.type == kDataPageV2) {
    if (h.definition_bytes < 0 || h.repetition_bytes < 0 ||
        static_cast<uint64_t>(h.definition_bytes) + h.repetition_bytes > raw.size())
      fail(page_at, "v2 page levels longer than the page");
    level_bytes = static_cast<size_t>(h.definition_bytes) + h.repetition_bytes;
    compressed = compressed && h.v2_compressed;
  }
  PageValues out{raw.substr(level_bytes), nullptr, compressed};
  if (compressed) {
    size_t expect = static_cast<size_t>(h.uncompressed_size) - level_bytes;
    if (static_cast<size_t>(h.uncompressed_size) < level_bytes)
      fail(page_at, "page sizes disagree");
    out.owned = decompress(codec, out.body, expect, page_at);
    out.body =
        std::string_view(reinterpret_cast<const char*>(out.owned->data()), out.owned->size());
  }
  return out;
}

std::unique_ptr<std::vector<uint8_t>> ChunkReader::decompress(int32_t codec, std::string_view body,
                                                              size_t expect,
                                                              const char* page_at) const {
  auto owned = std::make_unique<std::vector<uint8_t>>();
  if (codec == kSnappy) {
    size_t n = 0;
    if (snappy_uncompressed_length(body.data(), body.size(), &n) != SNAPPY_OK || n != expect)
      fail(page_at, "corrupt Snappy page");
    // Snappy expands by at most 64 bytes per 3-byte copy: a page claiming more is damaged,
    // and must not make us allocate what it claims.
    if (n / 22 > body.size())
      fail(page_at, "Snappy page claims " + std::to_string(n) + " bytes from " +
                        std::to_string(body.size()) + ", more than Snappy can expand to");
    owned->resize(n);
    if (snappy_uncompress(body.data(), body.size(), reinterpret_cast<char*>(owned->data()), &n) !=
            SNAPPY_OK ||
        n != expect)
      fail(page_at, "corrupt Snappy page");
  } else if (codec == kGzip) {
    *owned = gunzip(body, name_, expect);
    if (owned->size() != expect) fail(page_at, "gzip page size disagrees with its header");
  } else {
    fail(page_at, "unsupported Parquet compression codec " + std::to_string(codec) +
                      " (supported: none, Snappy, gzip)");
  }
  return owned;
}

void ChunkReader::dictionary_page(const PageHeader& h, const char* v, const char* vend,
                                  const char* at, const char* page_at) {
  if (h.encoding != kPlain && h.encoding != kPlainDictionary)
    fail(page_at, "unsupported dictionary encoding " + std::to_string(h.encoding));
  dict_ = Dictionary();
  const uint32_t n = static_cast<uint32_t>(h.num_values);
  for (uint32_t i = 0; i < n; ++i) {
    switch (info_.type) {
      case ParquetType::kInt32:
        if (vend - v < 4) fail(at, "truncated dictionary");
        dict_.ints.push_back(load<int32_t>(v));
        v += 4;
        break;
      case ParquetType::kInt64:
        if (vend - v < 8) fail(at, "truncated dictionary");
        dict_.ints.push_back(load<int64_t>(v));
        v += 8;
        break;
      case ParquetType::kFloat:
        if (vend - v < 4) fail(at, "truncated dictionary");
        dict_.doubles.push_back(load<float>(v));
        v += 4;
        break;
      case ParquetType::kDouble:
        if (vend - v < 8) fail(at, "truncated dictionary");
        dict_.doubles.push_back(load<double>(v));
        v += 8;
        break;
      case ParquetType::kByteArray: {
        if (vend - v < 4) fail(at, "truncated dictionary");
        uint32_t len = load<uint32_t>(v);
        v += 4;
        if (len > static_cast<uint64_t>(vend - v)) fail(at, "truncated dictionary string");
        dict_.strings.emplace_back(v, len);
        v += len;
        break;
      }
      case ParquetType::kFixedLenByteArray: {
        if (info_.type_length < 0 || info_.type_length > vend - v) fail(at, "truncated dictionary");
        dict_.strings.emplace_back(v, info_.type_length);
        v += info_.type_length;
        break;
      }
      default:
        fail(at, "unsupported dictionary value type");
    }
  }
}

// A data page: levels, then the values that are present.
void ChunkReader::data_page(const PageHeader& h, std::string_view raw, const char* v,
                            const char* vend, const char* at, const char* page_at) {
  const uint32_t n = static_cast<uint32_t>(h.num_values);
  read_levels(h, raw, v, vend, at, page_at);
  size_t base = out_.valid.size();
  uint32_t present = apply_levels(n, base, at);
  if (strings_)
    out_.strings.resize(base + n);
  else if (floats_)
    out_.doubles.resize(base + n, 0.0);
  else
    out_.ints.resize(base + n, 0);

  PresentSlots slots(out_.valid, base);
  if (h.encoding == kPlainDictionary || h.encoding == kRleDictionary) {
    dictionary_values(v, vend, present, slots, at);
  } else if (h.encoding == kPlain) {
    plain_values(v, vend, present, slots, at);
  } else if (h.encoding == kRle && info_.type == ParquetType::kBoolean) {
    rle_booleans(v, vend, present, slots, at);
  } else {
    fail(page_at, "unsupported Parquet encoding " + std::to_string(h.encoding) +
                      " (supported: PLAIN, dictionary, RLE)");
  }
}

// Repetition, then definition levels: in front of the values in a v1 page (moving `v` past
// them), in the uncompressed head of the page in v2.
void ChunkReader::read_levels(const PageHeader& h, std::string_view raw, const char*& v,
                              const char* vend, const char* at, const char* page_at) {
  const uint32_t n = static_cast<uint32_t>(h.num_values);
  if (info_.max_repetition > 0) {
    if (h.type == kDataPageV2) {
      const char* q = raw.data();
      reps_.resize(n);
      dec_.hybrid(q, q + h.repetition_bytes, PageDecoder::bit_width(info_.max_repetition), n,
                  reps_.data(), page_at);
    } else {
      dec_.levels_v1(v, vend, info_.max_repetition, n, h.repetition_encoding, reps_, at);
    }
  }
  if (info_.max_definition > 0) {
    if (h.type == kDataPageV2) {
      const char* q = raw.data() + h.repetition_bytes;
      defs_.resize(n);
      dec_.hybrid(q, q + h.definition_bytes, PageDecoder::bit_width(info_.max_definition), n,
                  defs_.data(), page_at);
    } else {
      dec_.levels_v1(v, vend, info_.max_definition, n, h.definition_encoding, defs_, at);
    }
  }
}

// The page's n slots from `base` on: present where the definition level is the maximum, null
// below it; the levels are kept where the column has nested optional levels or lists. Returns
// how many values are present.
uint32_t ChunkReader::apply_levels(uint32_t n, size_t base, const char* at) {
  out_.valid.resize(base + n, 1);
  uint32_t present = n;
  if (info_.max_definition > 0) {
    present = 0;
    for (uint32_t i = 0; i < n; ++i) {
      if (defs_[i] > static_cast<uint32_t>(info_.max_definition))
        fail(at, "definition level above the schema's maximum");
      bool ok = defs_[i] == static_cast<uint32_t>(info_.max_definition);
      out_.valid[base + i] = ok;
      present += ok;
    }
    if (info_.max_definition > 1 || info_.max_repetition > 0)
      for (uint32_t i = 0; i < n; ++i) out_.definition.push_back(static_cast<int16_t>(defs_[i]));
  }
  if (info_.max_repetition > 0)
    for (uint32_t i = 0; i < n; ++i) {
      if (reps_[i] > static_cast<uint32_t>(info_.max_repetition))
        fail(at, "repetition level above the schema's maximum");
      out_.repetition.push_back(static_cast<int16_t>(reps_[i]));
    }
  return present;
}

// PLAIN_DICTIONARY / RLE_DICTIONARY: a bit width, then hybrid indices into the dictionary.
void ChunkReader::dictionary_values(const char* v, const char* vend, uint32_t present,
                                    PresentSlots& slots, const char* at) {
  if (present == 0) return;
  if (v >= vend) fail(at, "truncated dictionary indices");
  int width = static_cast<uint8_t>(*v++);
  indices_.resize(present);
  dec_.hybrid(v, vend, width, present, indices_.data(), at);
  size_t dn = dict_.size();
  for (uint32_t k = 0; k < present; ++k) {
    uint32_t ix = indices_[k];
    if (ix >= dn) fail(at, "dictionary index out of range");
    size_t s = slots.next();
    if (strings_)
      out_.strings[s] = dict_.strings[ix];
    else if (floats_)
      out_.doubles[s] = dict_.doubles[ix];
    else
      out_.ints[s] = dict_.ints[ix];
  }
}

// PLAIN: booleans one bit each, numbers little-endian, byte arrays with a 4-byte length.
void ChunkReader::plain_values(const char* v, const char* vend, uint32_t present,
                               PresentSlots& slots, const char* at) {
  if (info_.type == ParquetType::kBoolean) {
    if ((static_cast<uint64_t>(present) + 7) / 8 > static_cast<uint64_t>(vend - v))
      fail(at, "truncated boolean values");
    for (uint32_t k = 0; k < present; ++k)
      out_.ints[slots.next()] = (static_cast<uint8_t>(v[k / 8]) >> (k % 8)) & 1;
    return;
  }
  for (uint32_t k = 0; k < present; ++k) {
    size_t s = slots.next();
    switch (info_.type) {
      case ParquetType::kInt32:
        if (vend - v < 4) fail(at, "truncated values");
        out_.ints[s] = load<int32_t>(v);
        v += 4;
        break;
      case ParquetType::kInt64:
        if (vend - v < 8) fail(at, "truncated values");
        out_.ints[s] = load<int64_t>(v);
        v += 8;
        break;
      case ParquetType::kFloat:
        if (vend - v < 4) fail(at, "truncated values");
        out_.doubles[s] = load<float>(v);
        v += 4;
        break;
      case ParquetType::kDouble:
        if (vend - v < 8) fail(at, "truncated values");
        out_.doubles[s] = load<double>(v);
        v += 8;
        break;
      case ParquetType::kByteArray: {
        if (vend - v < 4) fail(at, "truncated values");
        uint32_t len = load<uint32_t>(v);
        v += 4;
        if (len > static_cast<uint64_t>(vend - v)) fail(at, "truncated string value");
        out_.strings[s] = std::string_view(v, len);
        v += len;
        break;
      }
      case ParquetType::kFixedLenByteArray:
        if (info_.type_length < 0 || info_.type_length > vend - v) fail(at, "truncated values");
        out_.strings[s] = std::string_view(v, info_.type_length);
        v += info_.type_length;
        break;
      default:
        fail(at, "unsupported value type");
    }
  }
}

// RLE booleans: a 4-byte length, then hybrid values of one bit.
void ChunkReader::rle_booleans(const char* v, const char* vend, uint32_t present,
                               PresentSlots& slots, const char* at) {
  if (vend - v < 4) fail(at, "truncated boolean values");
  v += 4;  // length prefix
  indices_.resize(present);
  dec_.hybrid(v, vend, 1, present, indices_.data(), at);
  for (uint32_t k = 0; k < present; ++k) out_.ints[slots.next()] = indices_[k];
}

}  // namespace

void ParquetFile::read_chunk(const ParquetColumnInfo& info, const Chunk& chunk,
                             ParquetColumn& out) const {
  ChunkReader(bytes_, name_, limits_, info, out).read(chunk);
}

}  // namespace jaxprof
