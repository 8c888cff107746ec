// The bytes of one input file: memory-mapped when plain, decompressed into memory when gzip.
// Views handed out by importers point into a Buffer, so a Profile keeps its Buffers alive.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace jaxprof {

class Buffer {
 public:
  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  // Maps `path` read-only; a gzip file (by magic bytes) is decompressed. Throws InputError for a
  // missing, unreadable, empty or undecompressable file.
  static std::shared_ptr<Buffer> open(const std::string& path);
  static std::shared_ptr<Buffer> from_bytes(std::vector<uint8_t> bytes, std::string path);

  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  std::string_view view() const { return {reinterpret_cast<const char*>(data_), size_}; }
  const std::string& path() const { return path_; }
  bool compressed() const { return compressed_; }

  // Tells the kernel we are done with [begin, end) for now: mapped pages leave the resident set
  // and fault back in from the page cache if touched again. For bytes already decoded into the
  // model: decoding a whole file then peaks near the larger of model and file, not their sum.
  // No-op for decompressed buffers.
  void release(size_t begin, size_t end) const;

 private:
  Buffer() = default;
  std::string path_;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  bool mapped_ = false;
  bool compressed_ = false;
  std::vector<uint8_t> owned_;
};

// Ranges of a Buffer handed back (Buffer::release) in batches: each release interrupts the
// other threads (a TLB shootdown), so not once per chunk read. Ranges that meet join (only whole
// pages go back); a batch goes back once it holds 8 MiB, and the rest at flush() or when it is
// dropped. One per thread.
class BatchedRelease {
 public:
  explicit BatchedRelease(const Buffer& buffer) : buffer_(&buffer) {}
  ~BatchedRelease() { flush(); }
  BatchedRelease(BatchedRelease&&) = default;
  BatchedRelease& operator=(BatchedRelease&&) = default;

  void add(size_t begin, size_t end);
  void flush();

 private:
  static constexpr size_t kBatch = size_t{8} << 20;
  const Buffer* buffer_;
  std::vector<std::pair<size_t, size_t>> ranges_;
  size_t bytes_ = 0;
};

// Decompresses a gzip (or multi-member gzip) stream. The output is capped at `max_output` bytes
// so a hostile file cannot exhaust memory. Throws InputError naming `path`; a stream that stops
// early is reported as a file cut short when `whole_file` (the stream is all of `path`).
std::vector<uint8_t> gunzip(std::string_view compressed, const std::string& path, size_t max_output,
                            bool whole_file = false);

bool has_gzip_magic(std::string_view bytes);

}  // namespace jaxprof
