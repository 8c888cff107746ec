#include "jaxprof/render/perfetto/perfetto_args.h"

#include <fmt/format.h>

#include <cmath>

#include "jaxprof/render/perfetto/perfetto.h"

namespace jaxprof {

TraceArgs& TraceArgs::operator=(const TraceArgs& o) {
  if (this == &o) return *this;
  for (size_t i = 0; i < o.size_; ++i)
    if (i < members_.size())
      members_[i] = o.members_[i];
    else
      members_.push_back(o.members_[i]);
  size_ = o.size_;
  return *this;
}

void TraceArgs::set(std::string_view key, std::string json_value) {
  for (size_t i = 0; i < size_; ++i)
    if (members_[i].first == key) {
      members_[i].second = std::move(json_value);
      return;
    }
  if (size_ < members_.size()) {
    members_[size_].first.assign(key);
    members_[size_].second = std::move(json_value);
  } else {
    members_.emplace_back(std::string(key), std::move(json_value));
  }
  ++size_;
}

bool TraceArgs::set_stat(std::string_view key, const StatValue& value) {
  switch (value.kind) {
    case StatKind::kInt64:
      set(key, std::to_string(value.i));
      return true;
    case StatKind::kUint64:
      set(key, std::to_string(value.u));
      return true;
    case StatKind::kDouble: {
      if (!std::isfinite(value.d)) {
        set(key, json_string_html_safe(fmt::format("{}", value.d)));
        return true;
      }
      std::string text = fmt::format("{}", value.d);
      if (text.find_first_of(".eE") == std::string::npos) text += ".0";
      set(key, std::move(text));
      return true;
    }
    case StatKind::kString:
    case StatKind::kRef:
      set(key, json_string_html_safe(value.str));
      return true;
    case StatKind::kBytes:
    case StatKind::kNone:
      return false;
  }
  return false;
}

bool TraceArgs::has(std::string_view key) const {
  for (const auto& [k, v] : members())
    if (k == key) return true;
  return false;
}

std::string TraceArgs::render() const {
  if (size_ == 0) return {};
  std::string out = ", \"args\": {";
  for (size_t i = 0; i < size_; ++i) {
    if (i) out += ", ";
    out += json_string_html_safe(members_[i].first);
    out += ": ";
    out += members_[i].second;
  }
  return out + "}";
}

}  // namespace jaxprof
