#include "jaxprof/formats/chrome_trace/json_value_check.h"

#include <vector>

namespace jaxprof {

namespace {

bool is_ws(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_hex(char c) { return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

// Past the string that starts at t[i] == '"', or npos when it is not a valid string.
size_t string_end(std::string_view t, size_t i) {
  for (++i; i < t.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(t[i]);
    if (c == '"') return i + 1;
    if (c < 0x20) return std::string_view::npos;  // control characters must be escaped
    if (c != '\\') continue;
    if (++i >= t.size()) return std::string_view::npos;
    switch (t[i]) {
      case '"':
      case '\\':
      case '/':
      case 'b':
      case 'f':
      case 'n':
      case 'r':
      case 't':
        break;
      case 'u':
        for (int k = 0; k < 4; ++k)
          if (++i >= t.size() || !is_hex(t[i])) return std::string_view::npos;
        break;
      default:
        return std::string_view::npos;
    }
  }
  return std::string_view::npos;
}

// Past the number that starts at t[i], or npos.
size_t number_end(std::string_view t, size_t i) {
  auto digits = [&](size_t from) {
    size_t k = from;
    while (k < t.size() && is_digit(t[k])) ++k;
    return k;
  };
  if (i < t.size() && t[i] == '-') ++i;
  if (i >= t.size() || !is_digit(t[i])) return std::string_view::npos;
  i = t[i] == '0' ? i + 1 : digits(i);
  if (i < t.size() && t[i] == '.') {
    const size_t k = digits(i + 1);
    if (k == i + 1) return std::string_view::npos;
    i = k;
  }
  if (i < t.size() && (t[i] == 'e' || t[i] == 'E')) {
    ++i;
    if (i < t.size() && (t[i] == '+' || t[i] == '-')) ++i;
    const size_t k = digits(i);
    if (k == i) return std::string_view::npos;
    i = k;
  }
  return i;
}

// Past the scalar (string, number, true, false, null) that starts at t[i], or npos.
size_t scalar_end(std::string_view t, size_t i) {
  auto literal = [&](std::string_view word) {
    return t.substr(i, word.size()) == word ? i + word.size() : std::string_view::npos;
  };
  switch (t[i]) {
    case '"':
      return string_end(t, i);
    case 't':
      return literal("true");
    case 'f':
      return literal("false");
    case 'n':
      return literal("null");
    default:
      return number_end(t, i);
  }
}

}  // namespace

bool is_json_value(std::string_view t) {
  // Most values checked are scalars (an event's ids and times): no container state for them.
  size_t first = 0;
  while (first < t.size() && is_ws(t[first])) ++first;
  if (first < t.size() && t[first] != '{' && t[first] != '[') {
    size_t k = scalar_end(t, first);
    if (k == std::string_view::npos) return false;
    while (k < t.size() && is_ws(t[k])) ++k;
    return k == t.size();
  }
  // What may come next: a value, a member's key (or the end of an empty object), a value or
  // the end of an empty array, the ':' after a key, a ',' or the container's end.
  enum class Want { kValue, kKeyOrEnd, kValueOrEnd, kColon, kCommaOrEnd };
  std::vector<char> open;  // the containers around the position: '{' or '['
  Want want = Want::kValue;
  size_t i = 0;
  while (true) {
    while (i < t.size() && is_ws(t[i])) ++i;
    if (i >= t.size()) return false;
    const char c = t[i];
    if (want == Want::kColon) {
      if (c != ':') return false;
      ++i;
      want = Want::kValue;
      continue;
    }
    if (want == Want::kCommaOrEnd) {
      if (c == ',') {
        ++i;
        want = open.back() == '{' ? Want::kKeyOrEnd : Want::kValue;
        if (want == Want::kKeyOrEnd) {
          // After a comma in an object: a key, not the end.
          while (i < t.size() && is_ws(t[i])) ++i;
          if (i >= t.size() || t[i] != '"') return false;
        }
        continue;
      }
      if (c != (open.back() == '{' ? '}' : ']')) return false;
      ++i;
      open.pop_back();
    } else if (want == Want::kKeyOrEnd) {
      if (c == '}') {
        ++i;
        open.pop_back();
      } else {
        if (c != '"') return false;
        i = string_end(t, i);
        if (i == std::string_view::npos) return false;
        want = Want::kColon;
        continue;
      }
    } else if (want == Want::kValueOrEnd && c == ']') {
      ++i;
      open.pop_back();
    } else if (c == '{' || c == '[') {
      open.push_back(c);
      ++i;
      want = c == '{' ? Want::kKeyOrEnd : Want::kValueOrEnd;
      continue;
    } else {
      i = scalar_end(t, i);
      if (i == std::string_view::npos) return false;
    }
    // A value ended.
    if (open.empty()) {
      while (i < t.size() && is_ws(t[i])) ++i;
      return i == t.size();
    }
    want = Want::kCommaOrEnd;
  }
}

}  // namespace jaxprof
