#include "jaxprof/io/zip.h"

#include <zlib.h>

#include <cstring>

#include "jaxprof/common/error.h"

namespace jaxprof {

namespace {

constexpr uint32_t kLocalSig = 0x04034b50, kCentralSig = 0x02014b50, kEndSig = 0x06054b50,
                   kZip64EndSig = 0x06064b50, kZip64LocatorSig = 0x07064b50;

uint16_t u16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | p[1] << 8); }
uint32_t u32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
         static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24;
}
uint64_t u64(const uint8_t* p) { return u32(p) | static_cast<uint64_t>(u32(p + 4)) << 32; }

// A member name that could escape a directory if extracted: refuse the archive outright.
bool unsafe_name(std::string_view name) {
  if (name.empty() || name.front() == '/' || name.front() == '\\') return true;
  if (name.size() >= 2 && name[1] == ':') return true;  // C:...
  size_t start = 0;
  while (start <= name.size()) {
    size_t end = name.find_first_of("/\\", start);
    if (end == std::string_view::npos) end = name.size();
    if (name.substr(start, end - start) == "..") return true;
    start = end + 1;
  }
  return name.find('\0') != std::string_view::npos;
}

}  // namespace

bool has_zip_magic(std::string_view bytes) {
  return bytes.size() >= 4 && (bytes.substr(0, 4) == std::string_view("PK\x03\x04", 4) ||
                               bytes.substr(0, 4) == std::string_view("PK\x05\x06", 4));
}

ZipArchive::ZipArchive(std::shared_ptr<Buffer> archive, ZipLimits limits)
    : archive_(std::move(archive)), limits_(limits) {
  const uint8_t* d = archive_->data();
  const uint64_t n = archive_->size();
  auto fail = [&](const std::string& reason, int64_t offset) -> void {
    throw InputError(path(), reason, offset);
  };
  if (n < 22) fail("not a zip archive (too short)", 0);
  // The end-of-central-directory record sits in the last 22 + 65535 bytes (comment).
  uint64_t lo = n > 22 + 65535 ? n - 22 - 65535 : 0;
  int64_t eocd = -1;
  for (uint64_t i = n - 22 + 1; i-- > lo;) {
    if (u32(d + i) == kEndSig) {
      eocd = static_cast<int64_t>(i);
      break;
    }
  }
  if (eocd < 0) {
    // Members come first, the directory last: an archive cut short has the one, not the other.
    if (u32(d) == kLocalSig)
      throw truncated_input(path(),
                            "its central directory (written at the end of an archive) is missing",
                            static_cast<int64_t>(n), n);
    fail("not a zip archive (no end of central directory record)", -1);
  }
  const uint8_t* e = d + eocd;
  uint64_t count = u16(e + 10);
  uint64_t dir_size = u32(e + 12);
  uint64_t dir_offset = u32(e + 16);
  if (count == 0xffff || dir_size == 0xffffffffu || dir_offset == 0xffffffffu) {
    // Zip64: a locator just before the record points to the zip64 end record.
    if (eocd < 20 || u32(d + eocd - 20) != kZip64LocatorSig)
      fail("zip64 archive without its locator", eocd);
    uint64_t z = u64(d + eocd - 20 + 8);
    // The zip64 end record is 56 bytes; an archive shorter than that cannot hold one.
    if (n < 56 || z > n - 56 || u32(d + z) != kZip64EndSig)
      fail("corrupt zip64 end of central directory", static_cast<int64_t>(z));
    count = u64(d + z + 32);
    dir_size = u64(d + z + 40);
    dir_offset = u64(d + z + 48);
  }
  if (dir_offset > n || dir_size > n - dir_offset)
    fail("central directory lies outside the file (truncated archive?)", eocd);
  if (count > dir_size / 46) fail("central directory smaller than its entry count", eocd);

  const uint8_t* p = d + dir_offset;
  const uint8_t* end = p + dir_size;
  entries_.reserve(count);
  for (uint64_t i = 0; i < count; ++i) {
    int64_t at = p - d;
    if (end - p < 46 || u32(p) != kCentralSig) fail("corrupt central directory entry", at);
    ZipEntry z;
    uint16_t flags = u16(p + 8);
    z.method = u16(p + 10);
    z.crc32 = u32(p + 16);
    z.compressed_size = u32(p + 20);
    z.size = u32(p + 24);
    uint16_t name_len = u16(p + 28), extra_len = u16(p + 30), comment_len = u16(p + 32);
    z.local_header = u32(p + 42);
    if (static_cast<uint64_t>(end - p) < 46ull + name_len + extra_len + comment_len)
      fail("corrupt central directory entry", at);
    z.name.assign(reinterpret_cast<const char*>(p + 46), name_len);
    // Zip64 sizes and offset, in this order, for the fields that overflowed.
    const uint8_t* x = p + 46 + name_len;
    const uint8_t* xend = x + extra_len;
    while (xend - x >= 4) {
      uint16_t id = u16(x), len = u16(x + 2);
      const uint8_t* v = x + 4;
      if (len > xend - v) break;
      if (id == 1) {
        const uint8_t* vend = v + len;
        if (z.size == 0xffffffffu && vend - v >= 8) z.size = u64(v), v += 8;
        if (z.compressed_size == 0xffffffffu && vend - v >= 8) z.compressed_size = u64(v), v += 8;
        if (z.local_header == 0xffffffffu && vend - v >= 8) z.local_header = u64(v), v += 8;
      }
      x += 4 + len;
    }
    p += 46 + name_len + extra_len + comment_len;
    if (unsafe_name(z.name))
      fail("refusing member with an unsafe name (absolute, or with '..'): '" + z.name + "'", at);
    if (flags & 1) fail("encrypted member '" + z.name + "' is not supported", at);
    if (z.method != 0 && z.method != 8)
      fail("member '" + z.name + "' uses unsupported compression method " +
               std::to_string(z.method) + " (supported: stored, deflate)",
           at);
    if (z.local_header >= n || z.compressed_size > n)
      fail("member '" + z.name + "' lies outside the archive (truncated?)", at);
    if (z.method == 0 && z.size != z.compressed_size)
      fail("stored member '" + z.name + "' with differing sizes", at);
    if (z.size > limits_.max_member_bytes ||
        (z.method == 8 && z.size > std::max<uint64_t>(z.compressed_size, 1024) * limits_.max_ratio))
      fail("member '" + z.name + "' declares " + std::to_string(z.size) +
               " bytes; refusing (a decompression bomb?)",
           at);
    entries_.push_back(std::move(z));
  }
}

const ZipEntry* ZipArchive::find(std::string_view name) const {
  for (const ZipEntry& e : entries_)
    if (e.name == name) return &e;
  return nullptr;
}

std::string_view ZipArchive::data_of(const ZipEntry& z) const {
  const uint8_t* d = archive_->data();
  const uint64_t n = archive_->size();
  const uint8_t* h = d + z.local_header;
  if (n - z.local_header < 30 || u32(h) != kLocalSig)
    throw InputError(member_path(z), "corrupt local header (truncated archive?)",
                     static_cast<int64_t>(z.local_header));
  uint64_t start = z.local_header + 30 + u16(h + 26) + u16(h + 28);
  if (start > n || z.compressed_size > n - start)
    throw InputError(member_path(z), "member data runs past the end of the archive (truncated?)",
                     static_cast<int64_t>(z.local_header));
  return {reinterpret_cast<const char*>(d + start), static_cast<size_t>(z.compressed_size)};
}

std::string_view ZipArchive::read(const ZipEntry& z, std::vector<uint8_t>& storage) const {
  std::string_view raw = data_of(z);
  std::string_view out = raw;
  if (z.method == 8) {
    storage.resize(z.size);
    z_stream zs;
    std::memset(&zs, 0, sizeof zs);
    if (inflateInit2(&zs, -15) != Z_OK) throw InputError(member_path(z), "cannot initialise zlib");
    struct Guard {
      z_stream* s;
      ~Guard() { inflateEnd(s); }
    } guard{&zs};
    // One call per 1 GiB window: zlib counts in 32 bits.
    size_t in_done = 0, out_done = 0;
    int rc = Z_OK;
    while (rc == Z_OK) {
      zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(raw.data() + in_done));
      zs.avail_in = static_cast<uInt>(std::min<size_t>(raw.size() - in_done, 1u << 30));
      zs.next_out = storage.data() + out_done;
      zs.avail_out = static_cast<uInt>(std::min<size_t>(storage.size() - out_done, 1u << 30));
      uInt in0 = zs.avail_in, out0 = zs.avail_out;
      rc = inflate(&zs, Z_NO_FLUSH);
      in_done += in0 - zs.avail_in;
      out_done += out0 - zs.avail_out;
      if (rc == Z_OK && in0 == zs.avail_in && out0 == zs.avail_out) break;  // no progress
    }
    if (rc != Z_STREAM_END || out_done != z.size)
      throw InputError(member_path(z),
                       out_done == z.size ? "member inflates to more than its declared size"
                                          : std::string("corrupt deflate data") +
                                                (zs.msg ? ": " + std::string(zs.msg) : ""),
                       static_cast<int64_t>(z.local_header));
    out = std::string_view(reinterpret_cast<const char*>(storage.data()), storage.size());
  }
  uint32_t crc = 0;
  for (size_t done = 0; done < out.size();) {
    uInt chunk = static_cast<uInt>(std::min<size_t>(out.size() - done, 1u << 30));
    crc = static_cast<uint32_t>(
        ::crc32(crc, reinterpret_cast<const Bytef*>(out.data() + done), chunk));
    done += chunk;
  }
  if (crc != z.crc32) throw InputError(member_path(z), "CRC mismatch (corrupt archive)");
  return out;
}

}  // namespace jaxprof
