#include "jaxprof/analysis/ops/kernel_details.h"

#include <charconv>
#include <cstdlib>
#include <string>

namespace jaxprof {

namespace {

std::optional<int64_t> parse_int(std::string_view s) {
  int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<std::array<int64_t, 3>> parse_dim3(std::string_view s) {
  std::array<int64_t, 3> out{1, 1, 1};
  for (size_t i = 0; i < 3; ++i) {
    size_t comma = s.find(',');
    std::optional<int64_t> v = parse_int(s.substr(0, comma));
    if (!v) return std::nullopt;
    out[i] = *v;
    if (comma == std::string_view::npos) return out;  // missing trailing dimensions are 1
    s.remove_prefix(comma + 1);
  }
  return std::nullopt;  // more than three components
}

std::optional<double> parse_double(std::string_view s) {
  std::string tmp(s);
  char* end = nullptr;
  double v = std::strtod(tmp.c_str(), &end);
  if (tmp.empty() || end != tmp.c_str() + tmp.size()) return std::nullopt;
  return v;
}

}  // namespace

std::optional<int64_t> KernelDetails::shared_bytes() const {
  if (static_shared || dynamic_shared)
    return static_shared.value_or(0) + dynamic_shared.value_or(0);
  return shared;
}

KernelDetails parse_kernel_details(std::string_view text) {
  KernelDetails d;
  size_t pos = 0;
  while (pos < text.size()) {
    while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\t' || text[pos] == '\n')) ++pos;
    size_t end = pos;
    while (end < text.size() && text[end] != ' ' && text[end] != '\t' && text[end] != '\n') ++end;
    std::string_view token = text.substr(pos, end - pos);
    pos = end;
    size_t colon = token.find(':');
    if (colon == std::string_view::npos) continue;
    std::string_view key = token.substr(0, colon), value = token.substr(colon + 1);
    if (key == "grid") {
      d.grid = parse_dim3(value);
    } else if (key == "block") {
      d.block = parse_dim3(value);
    } else if (key == "regs") {
      d.registers = parse_int(value);
    } else if (key == "static_shared") {
      d.static_shared = parse_int(value);
    } else if (key == "dynamic_shared") {
      d.dynamic_shared = parse_int(value);
    } else if (key == "shm" || key == "group_mem") {
      d.shared = parse_int(value);
    } else if (key == "private_mem") {
      d.private_mem = parse_int(value);
    } else if (key == "occ_pct") {
      d.occupancy_pct = parse_double(value);
    }
  }
  return d;
}

std::string dim3_string(const std::array<int64_t, 3>& d) {
  return std::to_string(d[0]) + "," + std::to_string(d[1]) + "," + std::to_string(d[2]);
}

}  // namespace jaxprof
