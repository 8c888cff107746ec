// Base64 (RFC 4648, standard alphabet, padded) for binary payloads carried inside JSON: the
// HloProtos a Perfetto export embeds.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace jaxprof {

std::string base64_encode(std::string_view bytes);
// nullopt for anything but padded standard base64 (no whitespace).
std::optional<std::vector<uint8_t>> base64_decode(std::string_view text);

}  // namespace jaxprof
