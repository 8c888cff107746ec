// The `args` of an exported trace event: a JSON object whose members are kept in insertion
// order, a later value replacing an earlier one of the same key (an event's own stat wins over
// its metadata's).
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "jaxprof/model/profile.h"

namespace jaxprof {

class TraceArgs {
 public:
  TraceArgs() = default;
  TraceArgs(const TraceArgs& o) { *this = o; }
  TraceArgs(TraceArgs&&) = default;
  TraceArgs& operator=(TraceArgs&&) = default;
  // Copies o's members into this one's strings, whose memory is reused: the writer copies an
  // op's args for each of its events.
  TraceArgs& operator=(const TraceArgs& o);
  // No members; their strings keep their memory for the next event's.
  void clear() { size_ = 0; }

  void set(std::string_view key, std::string json_value);
  // A stat as its JSON value: numbers as numbers (doubles keep a decimal point), text as strings.
  // Bytes (opaque payloads) are left out.
  // Returns false for a value left out.
  bool set_stat(std::string_view key, const StatValue& value);
  bool has(std::string_view key) const;
  // ", \"args\": {...}" (empty when there are no members).
  std::string render() const;
  // (key, value as JSON text), in order.
  std::span<const std::pair<std::string, std::string>> members() const {
    return {members_.data(), size_};
  }

 private:
  std::vector<std::pair<std::string, std::string>> members_;  // the first size_ are in use
  size_t size_ = 0;
};

}  // namespace jaxprof
