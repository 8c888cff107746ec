// The tokenizer's reading of one event: the members of a trace event object, as simdjson's On
// Demand API gives them, into Fields; and the check of every member it skips.
#pragma once

#include <simdjson.h>

#include <string_view>

#include "jaxprof/formats/chrome_trace/intern_cache.h"
#include "jaxprof/formats/chrome_trace/trace_import.h"

namespace jaxprof::chrome_trace {

class EventFieldReader {
 public:
  // Arg keys are interned into `strings` as they are read: event_stats only has a const Profile.
  EventFieldReader(StringTable& strings, InternCache& cache) : strings_(&strings), cache_(&cache) {}

  // Reads the members of the event `v` into `f` (views into the window). An error other than
  // SUCCESS leaves member(), bad_unread() and bad_value() saying what failed.
  simdjson::error_code read(simdjson::ondemand::value& v, Fields& f);

  // The event member (or arg) being read, for messages; empty outside a read.
  std::string_view member() const { return member_; }
  // Whether the error is a skipped member that is not well-formed JSON, and where it starts (in
  // the window's copy).
  bool bad_unread() const { return bad_unread_; }
  const char* bad_value() const { return bad_value_; }

  // At the start of a window: no member is being read.
  void reset() {
    member_ = {};
    bad_unread_ = false;
  }
  // After a read: member() is a view into the parser's strings, not for a later error.
  void forget_member() { member_ = {}; }

 private:
  simdjson::error_code read_args(simdjson::ondemand::value& value, Fields& f);
  simdjson::error_code not_json(std::string_view text);
  simdjson::error_code scalar_token(simdjson::ondemand::value& value, std::string_view& out,
                                    bool check = true);
  simdjson::error_code check_unread(simdjson::ondemand::value& value);
  static bool read_export_arg(std::string_view key, simdjson::ondemand::value& value, Fields& f);

  StringTable* strings_;
  InternCache* cache_;
  // A view into the parser's strings, which the next window's parse frees.
  std::string_view member_;
  bool bad_unread_ = false;          // the error is not_json's
  const char* bad_value_ = nullptr;  // where the value not_json refused starts, in the window
};

}  // namespace jaxprof::chrome_trace
