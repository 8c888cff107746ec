#include "jaxprof/render/html/html_short_text.h"

#include <fmt/format.h>

#include <vector>

#include "jaxprof/analysis/flame/flame.h"

namespace jaxprof {
namespace {

// "dot_general[dimension_numbers=...]" -> "dot_general".
std::string_view without_parameters(std::string_view part) {
  size_t open = part.find('[');
  if (open != std::string_view::npos && open > 0 && part.ends_with(']'))
    return part.substr(0, open);
  return part;
}

}  // namespace

std::string short_source(std::string_view source) {
  size_t slash = source.find_last_of('/');
  return std::string(slash == std::string_view::npos ? source : source.substr(slash + 1));
}

std::string short_op_path(std::string_view op_path, size_t max_chars) {
  std::vector<std::string_view> names = split_op_names(op_path);
  if (names.empty()) return std::string(op_path);
  std::vector<std::string_view> parts = split_op_path(names.front());
  std::string more = names.size() > 1 ? fmt::format(" (+{})", names.size() - 1) : "";
  if (parts.empty()) return std::string(names.front()) + more;
  for (std::string_view& p : parts) p = without_parameters(p);
  std::string whole;
  for (std::string_view p : parts) {
    if (!whole.empty()) whole += '/';
    whole += p;
  }
  if (whole.size() <= max_chars || parts.size() <= 2) return whole + more;
  // The first component, then the last ones that fit (at least the op itself).
  std::string tail(parts.back());
  size_t first = parts.size() - 1;
  while (first > 1 && parts.front().size() + tail.size() + parts[first - 1].size() + 5 <= max_chars)
    tail.insert(0, std::string(parts[--first]) + '/');
  std::string out(parts.front());
  out += first > 1 ? "/\u2026/" : "/";
  out += tail;
  out += more;
  return out;
}

}  // namespace jaxprof
