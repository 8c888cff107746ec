// Text made safe for the two machine-readable formats every output uses: a JSON string (quoted,
// escaped, invalid UTF-8 replaced) and a CSV field (quoted when it must be). Names come from
// untrusted profiles, so everything that writes JSON or CSV goes through these.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace jaxprof {

std::string json_string(std::string_view s);  // quoted and escaped
// The same appended to `out` (for outputs of many records: no string per field).
void append_json_string(std::string& out, std::string_view s);
std::string csv_field(std::string_view s);  // quoted when needed
// A JSON array of strings: ["a", "b"] (every renderer's "warnings" member).
std::string json_string_array(const std::vector<std::string>& items);

}  // namespace jaxprof
