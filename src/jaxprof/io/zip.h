// Reads zip archives (what nsys-jax writes) in memory: members are handed out as views into the
// mapped archive when stored, or inflated into memory when deflated. Nothing is written to disk.
// Names with ".." components or absolute paths are refused; sizes are checked against the central
// directory, so a zip bomb cannot make a member larger than it declares (or than the caps below).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "jaxprof/io/buffer.h"

namespace jaxprof {

struct ZipEntry {
  std::string name;
  uint16_t method = 0;  // 0 stored, 8 deflated
  uint32_t crc32 = 0;
  uint64_t compressed_size = 0;
  uint64_t size = 0;
  uint64_t local_header = 0;
  bool is_directory() const { return !name.empty() && name.back() == '/'; }
};

struct ZipLimits {
  uint64_t max_member_bytes = uint64_t{8} << 30;  // one member, uncompressed
  uint64_t max_ratio = 1100;                      // deflate cannot do better than ~1032:1
};

bool has_zip_magic(std::string_view bytes);

class ZipArchive {
 public:
  // Reads the central directory. Throws InputError naming the archive for anything malformed.
  explicit ZipArchive(std::shared_ptr<Buffer> archive, ZipLimits limits = {});

  const std::vector<ZipEntry>& entries() const { return entries_; }
  const ZipEntry* find(std::string_view name) const;
  const std::string& path() const { return archive_->path(); }
  const std::shared_ptr<Buffer>& buffer() const { return archive_; }

  // The member's bytes: a view into the archive when stored (valid while the archive's Buffer
  // lives), else inflated into `storage`. The CRC is checked either way.
  std::string_view read(const ZipEntry& entry, std::vector<uint8_t>& storage) const;

  // "archive.zip!member", how errors name a member.
  std::string member_path(const ZipEntry& entry) const { return path() + "!" + entry.name; }

 private:
  std::string_view data_of(const ZipEntry& entry) const;
  std::shared_ptr<Buffer> archive_;
  ZipLimits limits_;
  std::vector<ZipEntry> entries_;
};

}  // namespace jaxprof
