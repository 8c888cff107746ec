// Decompresses xz (LZMA2) data in memory, with the output and the decoder's memory capped so a
// hostile file cannot exhaust memory.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace jaxprof {

bool has_xz_magic(std::string_view bytes);

// Throws InputError naming `path` for corrupt or truncated data, or output beyond `max_output`.
// `verify_check` false skips the stream's own checksum of the output: for data whose compressed
// bytes another checksum already covers (a zip member's CRC-32).
std::vector<uint8_t> unxz(std::string_view compressed, const std::string& path, size_t max_output,
                          bool verify_check = true);

}  // namespace jaxprof
