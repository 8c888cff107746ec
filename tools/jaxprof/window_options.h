// --steps A:B and --time START:END of `export` and `view`: a window of the timeline
// (render/perfetto/trace_window.h), and the warning when a trace would pass what Perfetto's UI
// holds, with a window that fits.
#pragma once

#include <CLI/CLI.hpp>
#include <map>
#include <optional>
#include <string>

#include "jaxprof/model/profile.h"
#include "jaxprof/render/perfetto/perfetto.h"
#include "jaxprof/render/perfetto/trace_window.h"

namespace jaxprof::cli {

struct WindowFlags {
  std::string steps, time;
  double warn_bytes = 1e9;     // Perfetto's UI holds about this much of a trace file
  bool no_align = false;       // several hosts keep their recorded clocks
  bool critical_path = false;  // each step's critical path as tracks with arrows
};
void add_window_options(CLI::App* cmd, WindowFlags& flags);

// "1500", "1.5us", "2 ms", "1s" -> picoseconds (ns without a unit). Throws InputError.
int64_t parse_time_ps(const std::string& text, const std::string& option);

// The window the flags ask for; none when neither is given. Throws InputError for bad input
// (no step in the range: the steps there are; a time range that is empty).
std::optional<TraceWindow> resolve_window(const WindowFlags& flags, const Profile& profile);

// The trace's size, estimated from its events before it is written: when it would pass
// --warn-size, says so on stderr with a --steps range (else a --time range) that fits. The lines
// it decodes for that are forgotten again (Profile::forget_lines), as the export reads them one
// at a time.
void warn_if_too_big(const WindowFlags& flags, const Profile& profile, bool proto,
                     const std::optional<TraceWindow>& window);

// Several hosts' clock offsets (`jaxprof hosts`' estimates), to put them on one clock; empty for
// one host or with --no-align.
std::map<std::string, HostClock> host_clocks(const WindowFlags& flags, const Profile& profile);

// Writes the trace (the window of it when one is given: `counts` says what it kept; several
// hosts on one clock unless --no-align), and prints its notes on stderr.
PerfettoSummary write_trace(const Profile& profile, const std::string& path, TraceFormat format,
                            const std::optional<TraceWindow>& window, WindowCounts& counts,
                            const WindowFlags& flags);

}  // namespace jaxprof::cli
