// The event filters every command offers (--prefix, --match, --min-duration, --device,
// --max-events), as options: analysis/ops/event_filter.h applies them.
#pragma once

#include <cstdint>
#include <string>

namespace jaxprof {

struct EventFilterSpec {
  std::string prefix;           // event display name starts with this
  std::string match;            // RE2, searched anywhere in the display name
  int64_t min_duration_ps = 0;  // keep events at least this long
  std::string device;           // plane name substring, or "re:REGEX"
  uint64_t max_events = 0;      // 0 = no cap; else stop after this many events (warned)
  // How the caller spells these options, for error messages: the CLI's flags by default, the
  // Python keyword arguments ("match=") from the Python package.
  struct Names {
    std::string match = "--match", device = "--device", min_duration = "--min-duration";
  } names;
};

}  // namespace jaxprof
