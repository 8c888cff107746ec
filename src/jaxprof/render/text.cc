#include "jaxprof/render/text.h"

#include <fmt/format.h>

#include <algorithm>

namespace jaxprof {

bool parse_output_format(std::string_view text, OutputFormat& out) {
  if (text == "table")
    out = OutputFormat::kTable;
  else if (text == "json")
    out = OutputFormat::kJson;
  else if (text == "csv")
    out = OutputFormat::kCsv;
  else
    return false;
  return true;
}

std::string json_string(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  out += '"';
  for (size_t i = 0; i < s.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
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
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += '"';
  return out;
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

Table::Table(std::vector<std::string> header, std::vector<bool> numeric)
    : header_(std::move(header)), numeric_(std::move(numeric)) {
  numeric_.resize(header_.size(), false);
}

void Table::add(std::vector<std::string> row) {
  row.resize(header_.size());
  rows_.push_back(std::move(row));
}

namespace {

// Display width of UTF-8 text (code points; good enough for names).
size_t width(std::string_view s) {
  size_t w = 0;
  for (unsigned char c : s) w += (c & 0xc0) != 0x80;
  return w;
}

std::string cut(const std::string& s, size_t max_width) {
  if (width(s) <= max_width) return s;
  // Keep the head and the tail: kernel names differ at both ends.
  size_t keep = max_width > 3 ? max_width - 1 : max_width;
  size_t head = keep / 2, tail = keep - head;
  std::string out;
  size_t w = 0, i = 0;
  for (; i < s.size() && w < head; ++i) {
    out += s[i];
    if ((static_cast<unsigned char>(s[i]) & 0xc0) != 0x80) ++w;
  }
  while (i < s.size() && (static_cast<unsigned char>(s[i]) & 0xc0) == 0x80) out += s[i++];
  out += "\xe2\x80\xa6";  // …
  size_t j = s.size(), tw = 0;
  while (j > i && tw < tail) {
    --j;
    if ((static_cast<unsigned char>(s[j]) & 0xc0) != 0x80) ++tw;
  }
  out += s.substr(j);
  return out;
}

}  // namespace

std::string Table::render(size_t max_width) const {
  size_t n = header_.size();
  std::vector<std::vector<std::string>> cells;
  cells.push_back(header_);
  for (const auto& r : rows_) {
    std::vector<std::string> c;
    for (size_t i = 0; i < n; ++i) c.push_back(cut(r[i], max_width));
    cells.push_back(std::move(c));
  }
  std::vector<size_t> w(n, 0);
  for (const auto& r : cells)
    for (size_t i = 0; i < n; ++i) w[i] = std::max(w[i], width(r[i]));
  std::string out;
  for (size_t ri = 0; ri < cells.size(); ++ri) {
    std::string line;
    for (size_t i = 0; i < n; ++i) {
      const std::string& c = cells[ri][i];
      std::string pad(w[i] - width(c), ' ');
      if (i) line += "  ";
      line += numeric_[i] ? pad + c : c + (i + 1 < n ? pad : "");
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
    if (ri == 0) {
      std::string rule;
      for (size_t i = 0; i < n; ++i) {
        if (i) rule += "  ";
        rule += std::string(w[i], '-');
      }
      out += rule + "\n";
    }
  }
  return out;
}

}  // namespace jaxprof
