#include "jaxprof/io/xz.h"

#include <lzma.h>

#include <cstdint>
#include <cstdlib>

#include "jaxprof/common/error.h"
#include "jaxprof/io/huge_pages.h"

namespace jaxprof {

namespace {
// xz's largest preset dictionary is 64 MiB; decoding needs little more than that.
constexpr uint64_t kDecoderMemory = uint64_t{256} << 20;

// The decompressed size that a single-stream file's index records (xz writes one in every stream),
// or 0 when it cannot be read cheaply: then the output grows as it fills. Knowing it saves the
// copies and page faults of growing a multi-megabyte buffer.
uint64_t indexed_size(std::string_view compressed) {
  const auto* data = reinterpret_cast<const uint8_t*>(compressed.data());
  size_t n = compressed.size();
  if (n < 2 * LZMA_STREAM_HEADER_SIZE) return 0;
  lzma_stream_flags footer;
  if (lzma_stream_footer_decode(&footer, data + n - LZMA_STREAM_HEADER_SIZE) != LZMA_OK) return 0;
  uint64_t index_size = footer.backward_size;
  if (index_size > n - 2 * LZMA_STREAM_HEADER_SIZE) return 0;
  lzma_index* index = nullptr;
  uint64_t memlimit = uint64_t{16} << 20;
  size_t pos = n - LZMA_STREAM_HEADER_SIZE - index_size;
  if (lzma_index_buffer_decode(&index, &memlimit, nullptr, data, &pos,
                               n - LZMA_STREAM_HEADER_SIZE) != LZMA_OK)
    return 0;
  // Only when the index covers the whole input: one stream, no padding, nothing concatenated.
  uint64_t size = lzma_index_file_size(index) == n ? lzma_index_uncompressed_size(index) : 0;
  lzma_index_end(index, nullptr);
  return size;
}
// Decompressed members are megabytes: huge pages save most of the page faults of filling them.
// liblzma's own buffers (the dictionary: as large as the output, up to 64 MiB) get the same.
void* lzma_alloc(void*, size_t count, size_t size) {
  size_t bytes = count * size;
  void* p = std::malloc(bytes);
  if (p && bytes >= (size_t{4} << 20)) advise_huge_pages(p, bytes);
  return p;
}
void lzma_free(void*, void* p) { std::free(p); }
const lzma_allocator kAllocator = {lzma_alloc, lzma_free, nullptr};

}  // namespace

bool has_xz_magic(std::string_view bytes) {
  return bytes.size() >= 6 && bytes.substr(0, 6) == std::string_view(
                                                        "\xfd"
                                                        "7zXZ\0",
                                                        6);
}

std::vector<uint8_t> unxz(std::string_view compressed, const std::string& path, size_t max_output,
                          bool verify_check) {
  lzma_stream s = LZMA_STREAM_INIT;
  s.allocator = &kAllocator;
  // Concatenated streams are one file, as the xz tool treats them.
  uint32_t flags = LZMA_CONCATENATED | (verify_check ? 0 : LZMA_IGNORE_CHECK);
  if (lzma_stream_decoder(&s, kDecoderMemory, flags) != LZMA_OK)
    throw InputError(path, "cannot initialise the xz decoder");
  struct Guard {
    lzma_stream* s;
    ~Guard() { lzma_end(s); }
  } guard{&s};

  // The recorded size is a hint (the decoder checks the data against it); one byte more lets the
  // end of the stream be seen without growing the buffer.
  uint64_t hint = indexed_size(compressed);
  if (hint >= max_output) hint = 0;  // let the decoder find out whether it really is that large
  size_t first =
      hint ? static_cast<size_t>(hint) + 1 : std::max<size_t>(compressed.size() * 8, 4096);
  std::vector<uint8_t> out;
  out.reserve(std::min(max_output, first));
  advise_huge_pages(out.data(), out.capacity());
  out.resize(out.capacity());
  s.next_in = reinterpret_cast<const uint8_t*>(compressed.data());
  s.avail_in = compressed.size();
  size_t produced = 0;
  while (true) {
    if (produced == out.size()) {
      if (out.size() >= max_output)
        throw InputError(path, "xz data expands beyond " + std::to_string(max_output >> 20) +
                                   " MiB; refusing (a decompression bomb?)");
      out.resize(std::min(max_output, out.size() * 2));
    }
    s.next_out = out.data() + produced;
    s.avail_out = out.size() - produced;
    lzma_ret rc = lzma_code(&s, s.avail_in == 0 ? LZMA_FINISH : LZMA_RUN);
    produced = out.size() - s.avail_out;
    if (rc == LZMA_STREAM_END) break;
    if (rc == LZMA_OK) continue;
    int64_t at = static_cast<int64_t>(compressed.size() - s.avail_in);
    switch (rc) {
      case LZMA_BUF_ERROR:
        throw truncated_input(path, "the xz stream stops before its end", at, compressed.size());
      case LZMA_FORMAT_ERROR:
        throw InputError(path, "not xz data", 0);
      case LZMA_MEMLIMIT_ERROR:
        throw InputError(path, "xz data needs more than 256 MiB to decode; refusing", at);
      default:
        throw InputError(path,
                         "corrupt xz data (code " + std::to_string(static_cast<int>(rc)) + ")", at);
    }
  }
  out.resize(produced);
  // Copying a buffer that is nearly full to save its slack costs more than the slack.
  if (out.capacity() - produced > produced / 8) out.shrink_to_fit();
  return out;
}

}  // namespace jaxprof
