#include "jaxprof/io/xz.h"

#include <lzma.h>

#include "jaxprof/error.h"

namespace jaxprof {

namespace {
// xz's largest preset dictionary is 64 MiB; decoding needs little more than that.
constexpr uint64_t kDecoderMemory = uint64_t{256} << 20;
}  // namespace

bool has_xz_magic(std::string_view bytes) {
  return bytes.size() >= 6 && bytes.substr(0, 6) == std::string_view(
                                                        "\xfd"
                                                        "7zXZ\0",
                                                        6);
}

std::vector<uint8_t> unxz(std::string_view compressed, const std::string& path, size_t max_output) {
  lzma_stream s = LZMA_STREAM_INIT;
  // Concatenated streams are one file, as the xz tool treats them.
  if (lzma_stream_decoder(&s, kDecoderMemory, LZMA_CONCATENATED) != LZMA_OK)
    throw InputError(path, "cannot initialise the xz decoder");
  struct Guard {
    lzma_stream* s;
    ~Guard() { lzma_end(s); }
  } guard{&s};

  std::vector<uint8_t> out(std::min(max_output, std::max<size_t>(compressed.size() * 8, 4096)));
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
        throw InputError(path, "xz data ends early (truncated)", at);
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
  out.shrink_to_fit();
  return out;
}

}  // namespace jaxprof
