#include "jaxprof/render/text/sql_render.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <string_view>
#include <system_error>

namespace jaxprof {
namespace {

// The shortest digits that read back as `x` (finite, not zero), without trailing zeros, and the
// power of ten of the first one: x = ±d.ddd × 10^k.
struct Shortest {
  bool negative = false;
  std::string digits;
  int k = 0;
};

Shortest shortest(double x) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), x, std::chars_format::scientific);
  (void)ec;  // 64 bytes hold any double
  std::string_view text(buf, static_cast<size_t>(end - buf));
  Shortest s;
  if (!text.empty() && text[0] == '-') {
    s.negative = true;
    text.remove_prefix(1);
  }
  size_t e = text.find('e');
  for (char c : text.substr(0, e))
    if (c != '.') s.digits += c;
  std::string_view exp = text.substr(e + 1);
  if (!exp.empty() && exp[0] == '+') exp.remove_prefix(1);
  std::from_chars(exp.data(), exp.data() + exp.size(), s.k);
  while (s.digits.size() > 1 && s.digits.back() == '0') s.digits.pop_back();
  return s;
}

// Digits in plain notation: d.ddd × 10^k with the point where k puts it.
std::string plain(const std::string& digits, int k, bool point_zero) {
  const int n = static_cast<int>(digits.size());
  if (k < 0) return "0." + std::string(static_cast<size_t>(-k - 1), '0') + digits;
  if (k + 1 >= n)
    return digits + std::string(static_cast<size_t>(k + 1 - n), '0') + (point_zero ? ".0" : "");
  return digits.substr(0, static_cast<size_t>(k + 1)) + "." +
         digits.substr(static_cast<size_t>(k + 1));
}

std::string mantissa(const std::string& digits) {
  return digits.size() > 1 ? digits.substr(0, 1) + "." + digits.substr(1) : digits;
}

std::string exponent(int k, int min_digits) {
  std::string n = std::to_string(k < 0 ? -k : k);
  if (static_cast<int>(n.size()) < min_digits) n.insert(0, min_digits - n.size(), '0');
  return std::string("e") + (k < 0 ? "-" : "+") + n;
}

unsigned __int128 magnitude(__int128 v) {
  return v < 0 ? static_cast<unsigned __int128>(0) - static_cast<unsigned __int128>(v)
               : static_cast<unsigned __int128>(v);
}

std::string unsigned_text(unsigned __int128 u) {
  char buf[48];
  char* p = buf + sizeof(buf);
  do {
    *--p = static_cast<char>('0' + static_cast<int>(u % 10));
    u /= 10;
  } while (u != 0);
  return std::string(p, buf + sizeof(buf));
}

}  // namespace

std::string int128_text(__int128 v) {
  std::string out = v < 0 ? "-" : "";
  return out += unsigned_text(magnitude(v));
}

std::string python_float_repr(double x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  if (x == 0) return std::signbit(x) ? "-0.0" : "0.0";
  Shortest s = shortest(x);
  // repr switches to an exponent below 1e-4 and from 1e16 on, with two digits at least.
  std::string body = s.k < -4 || s.k >= 16 ? mantissa(s.digits) + exponent(s.k, 2)
                                           : plain(s.digits, s.k, /*point_zero=*/true);
  return (s.negative ? "-" : "") + body;
}

std::string arrow_csv_double(double x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  if (x == 0) return std::signbit(x) ? "-0" : "0";
  Shortest s = shortest(x);
  // Plain from 1e-6 up to below 1e10 (no ".0"), else d.ddde+k.
  std::string body = s.k >= -6 && s.k < 10 ? plain(s.digits, s.k, /*point_zero=*/false)
                                           : mantissa(s.digits) + exponent(s.k, 1);
  return (s.negative ? "-" : "") + body;
}

std::string python_decimal_text(__int128 unscaled, unsigned scale) {
  // Decimal.__str__ of (sign, digits, exponent -scale): plain while the first digit's place
  // (leftdigits) is above -6, else one digit, the rest after a point, and E±n.
  const std::string coeff = unsigned_text(magnitude(unscaled));
  const int left = static_cast<int>(coeff.size()) - static_cast<int>(scale);
  const int dot = left > -6 ? left : 1;
  std::string out = unscaled < 0 ? "-" : "";
  if (dot <= 0)
    out += "0." + std::string(static_cast<size_t>(-dot), '0') + coeff;
  else if (dot >= static_cast<int>(coeff.size()))
    out += coeff + std::string(static_cast<size_t>(dot) - coeff.size(), '0');
  else
    out += coeff.substr(0, static_cast<size_t>(dot)) + "." + coeff.substr(static_cast<size_t>(dot));
  if (left != dot) {
    out += left > dot ? "E+" : "E";
    out += std::to_string(left - dot);
  }
  return out;
}

std::string python_decimal_json(__int128 unscaled, unsigned scale) {
  unsigned __int128 pow10 = 1;
  for (unsigned i = 0; i < scale; ++i) pow10 *= 10;
  const unsigned __int128 m = magnitude(unscaled);
  if (m % pow10 == 0) {
    const unsigned __int128 whole = m / pow10;
    std::string out = unscaled < 0 && whole != 0 ? "-" : "";
    return out += unsigned_text(whole);
  }
  // float(Decimal) reads str(Decimal) back: the double nearest the exact value.
  const std::string digits = unsigned_text(m);
  std::string text =
      digits.size() > scale
          ? digits.substr(0, digits.size() - scale) + "." + digits.substr(digits.size() - scale)
          : "0." + std::string(scale - digits.size(), '0') + digits;
  double x = 0;
  std::from_chars(text.data(), text.data() + text.size(), x);
  return python_float_repr(unscaled < 0 ? -x : x);
}

namespace {

// json.dumps's string: ASCII only, everything outside ' '..'~' as \uXXXX (surrogate pairs above
// U+FFFF), with the short escapes for quote, backslash and the usual controls.
void json_string(std::string& out, std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  auto escape = [&out](unsigned u) {
    out += "\\u";
    for (int shift = 12; shift >= 0; shift -= 4) out += kHex[(u >> shift) & 15];
  };
  out += '"';
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c <= 0x7e && c != '"' && c != '\\') {
      out += static_cast<char>(c);
      ++i;
      continue;
    }
    switch (c) {
      case '"':
        out += "\\\"";
        ++i;
        continue;
      case '\\':
        out += "\\\\";
        ++i;
        continue;
      case '\n':
        out += "\\n";
        ++i;
        continue;
      case '\r':
        out += "\\r";
        ++i;
        continue;
      case '\t':
        out += "\\t";
        ++i;
        continue;
      case '\b':
        out += "\\b";
        ++i;
        continue;
      case '\f':
        out += "\\f";
        ++i;
        continue;
      default:
        break;
    }
    unsigned cp = c;
    size_t len = 1;
    if (c >= 0xf0 && i + 3 < s.size()) {
      cp = (c & 0x07u) << 18 | (static_cast<unsigned char>(s[i + 1]) & 0x3fu) << 12 |
           (static_cast<unsigned char>(s[i + 2]) & 0x3fu) << 6 |
           (static_cast<unsigned char>(s[i + 3]) & 0x3fu);
      len = 4;
    } else if (c >= 0xe0 && i + 2 < s.size()) {
      cp = (c & 0x0fu) << 12 | (static_cast<unsigned char>(s[i + 1]) & 0x3fu) << 6 |
           (static_cast<unsigned char>(s[i + 2]) & 0x3fu);
      len = 3;
    } else if (c >= 0xc0 && i + 1 < s.size()) {
      cp = (c & 0x1fu) << 6 | (static_cast<unsigned char>(s[i + 1]) & 0x3fu);
      len = 2;
    }
    if (cp > 0xffff) {
      cp -= 0x10000;
      escape(0xd800 + (cp >> 10));
      escape(0xdc00 + (cp & 0x3ff));
    } else {
      escape(cp);
    }
    i += len;
  }
  out += '"';
}

// A cell as json.dumps writes the Python value DuckDB gives for it.
void json_cell(std::string& out, const SqlColumn& c, size_t row) {
  if (!c.valid[row]) {
    out += "null";
    return;
  }
  switch (c.type) {
    case SqlType::kBool:
      out += c.i[row] ? "true" : "false";
      return;
    case SqlType::kInteger:
      out += int128_text(c.i[row]);
      return;
    case SqlType::kDecimal:
      out += python_decimal_json(c.i[row], c.scale);
      return;
    case SqlType::kVarchar:
      json_string(out, c.s[row]);
      return;
    case SqlType::kDouble: {
      const double x = c.f[row];
      out += std::isnan(x)   ? "NaN"
             : std::isinf(x) ? (x > 0 ? "Infinity" : "-Infinity")
                             : python_float_repr(x);
      return;
    }
  }
}

// str() of the Python value (the text table's cells); a null is empty.
std::string text_cell(const SqlColumn& c, size_t row) {
  if (!c.valid[row]) return "";
  switch (c.type) {
    case SqlType::kBool:
      return c.i[row] ? "True" : "False";
    case SqlType::kInteger:
      return int128_text(c.i[row]);
    case SqlType::kDecimal:
      return python_decimal_text(c.i[row], c.scale);
    case SqlType::kVarchar:
      return c.s[row];
    case SqlType::kDouble:
      return python_float_repr(c.f[row]);
  }
  return "";
}

std::string csv_quoted(std::string_view s) {
  std::string out = "\"";
  for (char ch : s) {
    if (ch == '"') out += '"';
    out += ch;
  }
  return out + "\"";
}

std::string csv_cell(const SqlColumn& c, size_t row) {
  if (!c.valid[row]) return "";
  switch (c.type) {
    case SqlType::kBool:
      return c.i[row] ? "true" : "false";
    case SqlType::kVarchar:
      return csv_quoted(c.s[row]);
    case SqlType::kDouble:
      return arrow_csv_double(c.f[row]);
    default:
      return text_cell(c, row);
  }
}

// Python's len() of UTF-8 text: its code points.
size_t code_points(std::string_view s) {
  size_t n = 0;
  for (char ch : s) n += (static_cast<unsigned char>(ch) & 0xc0) != 0x80;
  return n;
}

// What str.isspace() holds: the characters str.rstrip() takes off.
bool python_space(unsigned cp) {
  return (cp >= 0x09 && cp <= 0x0d) || (cp >= 0x1c && cp <= 0x20) || cp == 0x85 || cp == 0xa0 ||
         cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200a) || cp == 0x2028 || cp == 0x2029 ||
         cp == 0x202f || cp == 0x205f || cp == 0x3000;
}

void rstrip(std::string& s) {
  while (!s.empty()) {
    size_t start = s.size() - 1;
    while (start > 0 && (static_cast<unsigned char>(s[start]) & 0xc0) == 0x80) --start;
    const auto lead = static_cast<unsigned char>(s[start]);
    unsigned cp = lead;
    if (lead >= 0xc0) {
      cp = lead >= 0xf0 ? lead & 0x07u : lead >= 0xe0 ? lead & 0x0fu : lead & 0x1fu;
      for (size_t i = start + 1; i < s.size(); ++i)
        cp = cp << 6 | (static_cast<unsigned char>(s[i]) & 0x3fu);
    }
    if (!python_space(cp)) return;
    s.resize(start);
  }
}

}  // namespace

std::string render_sql_json(const SqlResult& r) {
  // dict(zip(names, row)): a repeated name keeps its first place and its last value.
  std::vector<std::pair<std::string, size_t>> keys;
  for (size_t c = 0; c < r.columns.size(); ++c) {
    bool seen = false;
    for (auto& k : keys)
      if (k.first == r.columns[c].name) {
        k.second = c;
        seen = true;
      }
    if (!seen) keys.emplace_back(r.columns[c].name, c);
  }
  std::vector<std::string> quoted;
  for (const auto& k : keys) {
    std::string q;
    json_string(q, k.first);
    quoted.push_back(q + ": ");
  }
  std::string out = "[";
  for (size_t row = 0; row < r.rows; ++row) {
    out += row ? ", {" : "{";
    for (size_t k = 0; k < keys.size(); ++k) {
      if (k) out += ", ";
      out += quoted[k];
      json_cell(out, r.columns[keys[k].second], row);
    }
    out += '}';
  }
  return out + "]\n";
}

std::string render_sql_csv(const SqlResult& r) {
  std::string out;
  for (size_t c = 0; c < r.columns.size(); ++c) {
    if (c) out += ',';
    out += csv_quoted(r.columns[c].name);
  }
  out += '\n';
  for (size_t row = 0; row < r.rows; ++row) {
    for (size_t c = 0; c < r.columns.size(); ++c) {
      if (c) out += ',';
      out += csv_cell(r.columns[c], row);
    }
    out += '\n';
  }
  return out;
}

std::string render_sql_table(const SqlResult& r) {
  const size_t n = r.columns.size();
  std::vector<std::vector<std::string>> cells(r.rows, std::vector<std::string>(n));
  std::vector<size_t> widths(n);
  std::vector<bool> numeric(n);
  for (size_t c = 0; c < n; ++c) {
    const SqlColumn& col = r.columns[c];
    widths[c] = code_points(col.name);
    // Numbers (booleans among them, as Python's ints) go right; so does a column of nulls only.
    numeric[c] = true;
    for (size_t row = 0; row < r.rows; ++row) {
      cells[row][c] = text_cell(col, row);
      widths[c] = std::max(widths[c], code_points(cells[row][c]));
      if (col.type == SqlType::kVarchar && col.valid[row]) numeric[c] = false;
    }
  }
  auto line = [&](const std::vector<std::string>& values) {
    std::string s;
    for (size_t c = 0; c < n; ++c) {
      if (c) s += "  ";
      const std::string pad(widths[c] - code_points(values[c]), ' ');
      s += numeric[c] ? pad + values[c] : values[c] + pad;
    }
    rstrip(s);
    return s + "\n";
  };
  std::vector<std::string> names(n), rules(n);
  for (size_t c = 0; c < n; ++c) {
    names[c] = r.columns[c].name;
    rules[c] = std::string(widths[c], '-');
  }
  std::string out = line(names) + line(rules);
  for (const auto& row : cells) out += line(row);
  return out + "(" + std::to_string(r.rows) + (r.rows == 1 ? " row)\n" : " rows)\n");
}

}  // namespace jaxprof
