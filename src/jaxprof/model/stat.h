// XStat values: one of double, uint64, int64, string, bytes, or ref (a stat-metadata id whose name
// is the string value). Refs are resolved when decoded, so `str` holds the text for both.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "jaxprof/model/string_table.h"

namespace jaxprof {

enum class StatKind : uint8_t { kNone, kDouble, kUint64, kInt64, kString, kBytes, kRef };

struct StatValue {
  StatKind kind = StatKind::kNone;
  union {
    double d;
    uint64_t u;
    int64_t i;
  };
  std::string_view str;  // kString, kBytes, kRef (the referenced name)

  StatValue() : u(0) {}
  bool is_text() const {
    return kind == StatKind::kString || kind == StatKind::kRef || kind == StatKind::kBytes;
  }
  bool is_number() const {
    return kind == StatKind::kDouble || kind == StatKind::kUint64 || kind == StatKind::kInt64;
  }
  // Integer view of an integer stat (or a decimal string); nullopt otherwise.
  std::optional<int64_t> as_int() const {
    if (kind == StatKind::kInt64) return i;
    if (kind == StatKind::kUint64) return static_cast<int64_t>(u);
    return text_as_int();
  }
  std::optional<double> as_double() const;
  std::optional<int64_t> text_as_int() const;  // as_int of the other kinds
  // Human-readable rendering (numbers in decimal, bytes as a length note).
  std::string to_string() const;
};

struct Stat {
  StringId name = 0;
  StatValue value;
};

const char* stat_kind_name(StatKind k);

}  // namespace jaxprof
