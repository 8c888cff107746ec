// The whole capture as a timeline for Perfetto (its protobuf format, or Chrome trace JSON that
// also opens in chrome://tracing): every line of every device and host plane with every event
// and its stats, flows from host launches to their kernels and from each collective's first
// arrival to its last, memory in use per allocator, and tracks the raw profile lacks: per device
// a "category" track (compute,
// exposed communication, exposed memcpy, idle, set apart) and its module executions, and op
// events named by their HLO op with the JAX op path, source line, category and collective
// bandwidth as args. It also carries what jaxprof's own analyses need to read it back and tell
// the same story (docs/export.md): planes and lines by their names, every op event's stats, the
// host threads' events, and the HloProtos. Derived tracks are marked so that a reader
// leaves them out. Several hosts go on one clock, and each step's critical path can be drawn
// (PerfettoOptions).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "jaxprof/analysis/critical_path/critical_path.h"
#include "jaxprof/model/profile.h"
#include "jaxprof/render/perfetto/clock_shift_sink.h"
#include "jaxprof/render/perfetto/trace_sink.h"

namespace jaxprof {

struct PerfettoSummary {
  size_t devices = 0;
  uint64_t op_events = 0;
  uint64_t segments = 0;
  uint64_t executions = 0;
  uint64_t collective_events = 0;    // op events given bandwidth args
  uint64_t host_events = 0;          // host-thread events
  uint64_t other_device_events = 0;  // device-line events that are not ops (TPU Steps, ...)
  uint64_t module_line_events = 0;   // XLA Modules events, written from the executions
  uint64_t flows = 0;                // arrows from a host launch to its kernel
  uint64_t arrival_flows = 0;        // arrows from a collective's first arrival to its last
  uint64_t path_segments = 0;        // critical-path segments written
  uint64_t counter_tracks = 0, counter_points = 0;                // memory in use per allocator
  uint64_t device_counter_tracks = 0, device_counter_points = 0;  // `_counters_` lines
  uint64_t hlo_modules = 0;                                       // HloProtos carried along
  std::vector<std::string> notes;  // what the export left out, and why
};

// Exact microseconds from picoseconds: 1234567 -> "1.234567", 5000000 -> "5", -1 -> "-0.000001".
std::string ps_to_us_exact(int64_t ps);

// A JSON string literal that is also safe inside HTML: < > & become \u003c \u003e \u0026.
std::string json_string_html_safe(std::string_view s);

struct PerfettoOptions {
  // Several hosts on one clock: each host's offset, taken out of its times (clock_shift_sink.h).
  // Empty: every host keeps its recorded clock.
  std::map<std::string, HostClock> host_clocks;
  // Each step's critical path as derived tracks with arrows (critical_path_track.h); none: no
  // such tracks.
  const CriticalPathResult* critical_path = nullptr;
  // Decode each line just before it is written and forget it after (Profile::forget_lines):
  // memory holds one line's events and bytes at a time rather than the whole capture's. For a
  // profile that is dropped after the export (the command); a profile read again afterwards
  // decodes those lines again.
  bool one_line_at_a_time = false;
};

// Writes the trace to a sink (JSON or Perfetto protobuf, trace_sink.h).
PerfettoSummary write_perfetto(const Profile& profile, TraceSink& sink,
                               const PerfettoOptions& options = {});

// Streams the JSON trace to `sink` in pieces (the text can be far larger than the profile).
PerfettoSummary write_perfetto(const Profile& profile,
                               const std::function<void(std::string_view)>& sink);

enum class TraceFormat { kAuto, kJson, kProto };

// kAuto: JSON for names ending ".json" or ".json.gz", else Perfetto's protobuf.
TraceFormat trace_format_of(const std::string& path, TraceFormat asked);

// Streams what `write` produces to `path` (gzip-compressed when it ends in ".gz"), throwing
// InputError naming the path when it cannot be written.
PerfettoSummary stream_to_file(
    const std::string& path,
    const std::function<PerfettoSummary(const std::function<void(std::string_view)>&)>& write);
// Writes the trace to `path` (format as trace_format_of says; gzip-compressed when it ends in
// ".gz"), streamed: the output is never whole in memory.
PerfettoSummary write_perfetto_file(const Profile& profile, const std::string& path,
                                    TraceFormat format = TraceFormat::kAuto,
                                    const PerfettoOptions& options = {});

}  // namespace jaxprof
