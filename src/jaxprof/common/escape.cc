#include "jaxprof/common/escape.h"

#include <fmt/format.h>

namespace jaxprof {

std::string json_string(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  append_json_string(out, s);
  return out;
}

void append_json_string(std::string& out, std::string_view s) {
  out += '"';
  // Runs of bytes that stand for themselves are appended whole (most strings are one run).
  size_t run = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') continue;
    out.append(s.data() + run, i - run);
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20 || c == 0x7f) {
          out += fmt::format("\\u{:04x}", c);
        } else if (c >= 0x80) {
          // Pass valid UTF-8 through; replace invalid bytes so the output stays valid JSON.
          int len = (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
          bool ok = len > 0 && i + len <= s.size();
          for (int k = 1; ok && k < len; ++k)
            ok = (static_cast<unsigned char>(s[i + k]) >> 6) == 0x2;
          if (ok) {
            out.append(s.substr(i, len));
            i += len - 1;
          } else {
            out += "\\ufffd";
          }
        }
    }
    run = i + 1;
  }
  out.append(s.data() + run, s.size() - run);
  out += '"';
}

std::string csv_field(std::string_view s) {
  bool quote = s.find_first_of(",\"\n\r") != std::string_view::npos;
  if (!quote) return std::string(s);
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

std::string json_string_array(const std::vector<std::string>& items) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) out += ", ";
    out += json_string(items[i]);
  }
  return out + "]";
}

}  // namespace jaxprof
