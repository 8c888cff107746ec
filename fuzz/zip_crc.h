// Rewrites the CRC-32 of every member of a zip archive in place to match its data, so that the
// mutations a fuzzer makes inside members reach the parsers behind the CRC check instead of
// stopping at it. Anything it cannot follow (a damaged directory, a member that does not inflate)
// it leaves alone. Sizes and offsets are never changed.
#pragma once

#include <zlib.h>

#include <cstdint>
#include <cstring>
#include <vector>

namespace jaxprof::fuzz {

inline uint32_t get32(const uint8_t* p) {
  return uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
}
inline uint16_t get16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | p[1] << 8); }
inline void put32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}

// The CRC of the member's data (inflated when deflated), or false when it cannot be worked out.
inline bool member_crc(const uint8_t* raw, size_t raw_size, uint16_t method, uint32_t size,
                       uint32_t& crc) {
  if (method == 0) {
    crc = static_cast<uint32_t>(::crc32(0, raw, static_cast<uInt>(raw_size)));
    return true;
  }
  if (method != 8 || size > (1u << 24)) return false;
  std::vector<uint8_t> out(size);
  z_stream zs;
  std::memset(&zs, 0, sizeof zs);
  if (inflateInit2(&zs, -15) != Z_OK) return false;
  zs.next_in = const_cast<Bytef*>(raw);
  zs.avail_in = static_cast<uInt>(raw_size);
  zs.next_out = out.data();
  zs.avail_out = static_cast<uInt>(out.size());
  int rc = inflate(&zs, Z_FINISH);
  size_t produced = out.size() - zs.avail_out;
  inflateEnd(&zs);
  if (rc != Z_STREAM_END || produced != size) return false;
  crc = static_cast<uint32_t>(::crc32(0, out.data(), static_cast<uInt>(produced)));
  return true;
}

inline void fix_zip_crcs(uint8_t* d, size_t n) {
  if (n < 22) return;
  size_t eocd = n - 22;
  size_t lo = n > 22 + 65535 ? n - 22 - 65535 : 0;
  while (get32(d + eocd) != 0x06054b50) {
    if (eocd == lo) return;
    --eocd;
  }
  uint32_t count = get16(d + eocd + 10);
  uint64_t dir = get32(d + eocd + 16);
  for (uint32_t i = 0; i < count; ++i) {
    if (dir + 46 > n || get32(d + dir) != 0x02014b50) return;
    uint8_t* c = d + dir;
    uint16_t method = get16(c + 10);
    uint32_t compressed = get32(c + 20), size = get32(c + 24);
    uint64_t local = get32(c + 42);
    dir += 46ull + get16(c + 28) + get16(c + 30) + get16(c + 32);
    if (local + 30 > n || get32(d + local) != 0x04034b50) continue;
    uint64_t start = local + 30 + get16(d + local + 26) + get16(d + local + 28);
    if (start > n || compressed > n - start) continue;
    uint32_t crc;
    if (!member_crc(d + start, compressed, method, size, crc)) continue;
    put32(c + 16, crc);
    put32(d + local + 14, crc);
  }
}

}  // namespace jaxprof::fuzz
