#include "jaxprof/model/stat.h"

#include <fmt/format.h>

#include <charconv>

namespace jaxprof {

std::optional<int64_t> StatValue::text_as_int() const {
  switch (kind) {
    case StatKind::kString:
    case StatKind::kRef: {
      int64_t v = 0;
      auto [p, ec] = std::from_chars(str.data(), str.data() + str.size(), v);
      if (ec == std::errc() && p == str.data() + str.size()) return v;
      uint64_t uv = 0;
      auto [p2, ec2] = std::from_chars(str.data(), str.data() + str.size(), uv);
      if (ec2 == std::errc() && p2 == str.data() + str.size()) return static_cast<int64_t>(uv);
      return std::nullopt;
    }
    default:
      return std::nullopt;
  }
}

std::optional<double> StatValue::as_double() const {
  switch (kind) {
    case StatKind::kDouble:
      return d;
    case StatKind::kInt64:
      return static_cast<double>(i);
    case StatKind::kUint64:
      return static_cast<double>(u);
    default:
      return std::nullopt;
  }
}

std::string StatValue::to_string() const {
  switch (kind) {
    case StatKind::kNone:
      return "";
    case StatKind::kDouble:
      return fmt::format("{}", d);
    case StatKind::kUint64:
      return fmt::format("{}", u);
    case StatKind::kInt64:
      return fmt::format("{}", i);
    case StatKind::kString:
    case StatKind::kRef:
      return std::string(str);
    case StatKind::kBytes:
      return fmt::format("<{} bytes>", str.size());
  }
  return "";
}

const char* stat_kind_name(StatKind k) {
  switch (k) {
    case StatKind::kNone:
      return "none";
    case StatKind::kDouble:
      return "double";
    case StatKind::kUint64:
      return "uint64";
    case StatKind::kInt64:
      return "int64";
    case StatKind::kString:
      return "str";
    case StatKind::kBytes:
      return "bytes";
    case StatKind::kRef:
      return "ref";
  }
  return "?";
}

}  // namespace jaxprof
