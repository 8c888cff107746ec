#include "window_options.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <limits>

#include "jaxprof/analysis/critical_path/critical_path.h"
#include "jaxprof/analysis/hosts/host_clocks.h"
#include "jaxprof/analysis/steps/steps.h"
#include "jaxprof/analysis/timeline/window_events.h"
#include "jaxprof/common/error.h"
#include "jaxprof/common/units.h"

namespace jaxprof::cli {

namespace {

// Bytes per event of the trace (file size / events of the profile), measured on the bundled
// capture and the shared xplane fixtures: 60 to 260 in the protobuf, 130 to 410 in JSON (args,
// and the HloProtos JSON carries, make most of it). Above the middle, so that it errs high.
constexpr double kProtoBytesPerEvent = 160;
constexpr double kJsonBytesPerEvent = 320;

std::pair<std::string, std::string> split_range(const std::string& text,
                                                const std::string& option) {
  size_t colon = text.find(':');
  if (colon == std::string::npos) return {text, text};
  if (text.find(':', colon + 1) != std::string::npos)
    throw InputError("", fmt::format("{} {}: expected A:B", option, text));
  return {text.substr(0, colon), text.substr(colon + 1)};
}

int64_t parse_step(const std::string& text, const std::string& option) {
  try {
    size_t used = 0;
    long long v = std::stoll(text, &used);
    if (used == text.size()) return v;
  } catch (const std::exception&) {
  }
  throw InputError("", fmt::format("{}: '{}' is not a step number", option, text));
}

}  // namespace

void add_window_options(CLI::App* cmd, WindowFlags& f) {
  cmd->add_option("--steps", f.steps,
                  "Only the steps A to B (both included; A alone: one step), numbered as the "
                  "steps of `jaxprof modules` (the number of each in its JSON)");
  cmd->add_option("--time", f.time,
                  "Only START:END from the profile's zero (its first instant, time 0 of the "
                  "trace), in ns or with a unit (ns, us, ms, s): 2ms:3.5ms; an empty end is the "
                  "profile's end");
  cmd->add_option("--warn-size", f.warn_bytes,
                  "Say so (and suggest a window) when the trace would pass this many bytes")
      ->capture_default_str();
  cmd->add_flag("--critical-path", f.critical_path,
                "Also each step's critical path (`jaxprof critical-path`): a 'critical path' track "
                "on each device and host it runs through, an arrow from each segment to the next");
  cmd->add_flag("--no-align", f.no_align,
                "Several hosts keep their recorded clocks (default: each is moved by the clock "
                "offset `jaxprof hosts` estimates, so that the hosts share one clock)");
}

int64_t parse_time_ps(const std::string& text, const std::string& option) {
  size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  std::string unit = text.substr(used);
  unit.erase(0, unit.find_first_not_of(' '));
  double scale = unit.empty() || unit == "ns"          ? 1e3
                 : unit == "us" || unit == "\xc2\xb5s" ? 1e6
                 : unit == "ms"                        ? 1e9
                 : unit == "s"                         ? 1e12
                                                       : 0;
  if (used == 0 || scale == 0 || !std::isfinite(v) || v < 0)
    throw InputError("", fmt::format("{}: '{}' is not a time (a number of ns, or with a unit: "
                                     "ns, us, ms, s)",
                                     option, text));
  return static_cast<int64_t>(std::llround(v * scale));
}

std::optional<TraceWindow> resolve_window(const WindowFlags& f, const Profile& p) {
  if (!f.steps.empty() && !f.time.empty()) throw InputError("", "give --steps or --time, not both");
  if (!f.time.empty()) {
    auto [a, b] = split_range(f.time, "--time");
    if (f.time.find(':') == std::string::npos)
      throw InputError("", fmt::format("--time {}: expected START:END", f.time));
    TraceWindow w{a.empty() ? 0 : parse_time_ps(a, "--time"),
                  b.empty() ? std::numeric_limits<int64_t>::max() : parse_time_ps(b, "--time"),
                  "time " + f.time};
    if (w.end_ps <= w.begin_ps)
      throw InputError("", fmt::format("--time {}: the end is not after the start", f.time));
    return w;
  }
  if (f.steps.empty()) return std::nullopt;
  auto [a, b] = split_range(f.steps, "--steps");
  int64_t first = parse_step(a, "--steps"), last = parse_step(b, "--steps");
  StepsResult steps = compute_steps(p);
  std::optional<TimeSpan> span = steps_span(steps, first, last);
  if (!span) {
    if (steps.steps.empty())
      throw InputError("",
                       "--steps: the profile marks no steps (docs/modules.md, Steps); use "
                       "--time");
    int64_t lo = steps.steps.front().number, hi = lo;
    for (const Step& s : steps.steps) lo = std::min(lo, s.number), hi = std::max(hi, s.number);
    throw InputError("", fmt::format("--steps {}: no step numbered so; the profile's steps "
                                     "are {} to {} ({})",
                                     f.steps, lo, hi, steps.source));
  }
  return TraceWindow{span->begin_ps, span->end_ps, "steps " + f.steps};
}

void warn_if_too_big(const WindowFlags& f, const Profile& p, bool proto,
                     const std::optional<TraceWindow>& window) {
  double per_event = proto ? kProtoBytesPerEvent : kJsonBytesPerEvent;
  std::optional<TimeSpan> span;
  if (window) span = TimeSpan{window->begin_ps, window->end_ps};
  uint64_t events = count_events(p, span);
  double bytes = static_cast<double>(events) * per_event;
  if (bytes <= f.warn_bytes) return;
  auto max_events = static_cast<uint64_t>(f.warn_bytes / per_event);
  // The hint reads every host thread (steps, their events); the export then reads each line
  // once, one at a time: the lines decoded here are handed back once it is made.
  std::vector<uint32_t> not_decoded;
  for (uint32_t li = 0; li < p.lines.size(); ++li)
    if (!p.lines[li].decoded) not_decoded.push_back(li);
  std::string hint;
  if (auto run = steps_that_fit(p, compute_steps(p), max_events))
    hint = fmt::format("--steps {}:{} (about {})", run->first, run->last,
                       human_bytes(static_cast<double>(run->events) * per_event));
  else {
    // No steps (or one is too big): the share of the profile's span that fits.
    int64_t end = 0;
    p.require_all_lines();
    for (const Line& line : p.lines)
      for (uint32_t e = line.first_event; e < line.first_event + line.event_count; ++e)
        end = std::max(end, p.events.start_ps[e] + p.events.duration_ps[e]);
    if (window) end = std::min(end, window->end_ps);
    int64_t begin = window ? window->begin_ps : 0;
    double share = f.warn_bytes / bytes;
    auto until = begin + static_cast<int64_t>(static_cast<double>(end - begin) * share);
    hint = fmt::format("--time {}:{}", ps_to_ns_exact(begin), ps_to_ns_exact(until));
  }
  // The analyses made meanwhile (steps, compile records) keep event indices into those lines:
  // they are made again, from lines decoded again, when the export asks.
  p.forget_lines(not_decoded);
  p.drop_memos();
  std::fprintf(stderr,
               "jaxprof: warning: the trace would be about %s (%llu events%s), more than "
               "Perfetto's UI holds (about %s); export a window, e.g. %s\n",
               human_bytes(bytes).c_str(), static_cast<unsigned long long>(events),
               // The protobuf's packets are deflated on disk; the UI holds them inflated.
               proto ? ", inflated" : "", human_bytes(f.warn_bytes).c_str(), hint.c_str());
}

std::map<std::string, HostClock> host_clocks(const WindowFlags& f, const Profile& p) {
  if (f.no_align) return {};
  return jaxprof::host_clocks(p);
}

PerfettoSummary write_trace(const Profile& p, const std::string& path, TraceFormat format,
                            const std::optional<TraceWindow>& window, WindowCounts& counts,
                            const WindowFlags& flags) {
  // The profile is dropped after the export: each line's events are held only while written.
  PerfettoOptions options{.host_clocks = host_clocks(flags, p), .one_line_at_a_time = true};
  std::optional<CriticalPathResult> critical_path;
  if (flags.critical_path) {
    critical_path = compute_critical_path(p, {.rank = false});
    options.critical_path = &*critical_path;
  }
  if (p.hosts.size() > 1 && !flags.no_align && !p.clocks_aligned && options.host_clocks.empty())
    std::fprintf(stderr,
                 "jaxprof: note: no collective spans several hosts: each host keeps its recorded "
                 "clock\n");
  PerfettoSummary s;
  if (window) {
    s = write_perfetto_window_file(p, path, format, *window, counts, options);
    s.notes.push_back(fmt::format("window ({}): {}", window->label, counts.note()));
  } else {
    s = write_perfetto_file(p, path, format, options);
  }
  for (const std::string& n : s.notes) std::fprintf(stderr, "jaxprof: note: %s\n", n.c_str());
  return s;
}

}  // namespace jaxprof::cli
