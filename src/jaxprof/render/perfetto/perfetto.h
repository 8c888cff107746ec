// The device timeline as a Chrome/Perfetto trace (JSON, opens in ui.perfetto.dev and
// chrome://tracing), with tracks the raw profile lacks: per device a "category" track (compute,
// exposed communication, exposed memcpy, idle, set apart) and its module executions, and op
// events named by their HLO op with the JAX op path, source line, category and collective
// bandwidth as args. It also carries what jaxprof's own analyses need to read it back and tell
// the same story (docs/export.md): planes and lines by their names, every op event's stats, the
// host threads' compile events, and the HloProtos. Derived tracks are marked so that a reader
// leaves them out.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "jaxprof/model/profile.h"

namespace jaxprof {

struct PerfettoSummary {
  size_t devices = 0;
  uint64_t op_events = 0;
  uint64_t segments = 0;
  uint64_t executions = 0;
  uint64_t collective_events = 0;  // op events given bandwidth args
  uint64_t host_events = 0;        // host-thread events of compile windows
  uint64_t hlo_modules = 0;        // HloProtos carried along
  std::vector<std::string> notes;  // what the export left out, and why
};

// Exact microseconds from picoseconds: 1234567 -> "1.234567", 5000000 -> "5", -1 -> "-0.000001".
std::string ps_to_us_exact(int64_t ps);

// A JSON string literal that is also safe inside HTML: < > & become \u003c \u003e \u0026.
std::string json_string_html_safe(std::string_view s);

// Streams the trace to `sink` in pieces (the text can be far larger than the profile).
PerfettoSummary write_perfetto(const Profile& profile,
                               const std::function<void(std::string_view)>& sink);

// Writes the trace to `path`, gzip-compressed when it ends in ".gz". Throws InputError when the
// file cannot be written.
PerfettoSummary write_perfetto_file(const Profile& profile, const std::string& path);

}  // namespace jaxprof
