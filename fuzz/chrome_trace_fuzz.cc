// Chrome trace JSON (`*.trace.json`): read twice, in one window and in windows of a few hundred
// bytes (how large files are read), which must agree event for event; then every event's stats.
#include "fuzz_common.h"
#include "jaxprof/formats/chrome_trace/chrome_trace.h"

using namespace jaxprof;

namespace {

// The profile from the trace, or nullopt with the error.
std::optional<Profile> import(const uint8_t* data, size_t size, size_t window, std::string& error) {
  Profile p;
  ChromeTraceOptions options;
  options.window_bytes = window;
  options.release_pages = false;
  try {
    import_chrome_trace(p, fuzz::buffer_of(data, size, "fuzz.trace.json"), "fuzz", options);
    finish_import(p);
    p.require_all_lines();
  } catch (const InputError& e) {
    fuzz::named(e);
    error = e.what();
    return std::nullopt;
  }
  return p;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string whole_error, window_error;
  std::optional<Profile> whole = import(data, size, size_t{1} << 30, whole_error);
  std::optional<Profile> windowed = import(data, size, 256, window_error);
  if (whole.has_value() != windowed.has_value()) {
    std::fprintf(stderr, "one window: %s\nsmall windows: %s\n",
                 whole ? "read" : whole_error.c_str(), windowed ? "read" : window_error.c_str());
    fuzz::check(false, "windowed and whole reads disagree on whether the trace is valid");
  }
  if (!whole) return 0;
  const Events& a = whole->events;
  const Events& b = windowed->events;
  fuzz::check(a.size() == b.size() && whole->lines.size() == windowed->lines.size(),
              "windowed and whole reads differ in events or lines");
  for (size_t e = 0; e < a.size(); ++e)
    fuzz::check(a.start_ps[e] == b.start_ps[e] && a.duration_ps[e] == b.duration_ps[e] &&
                    whole->event_name(static_cast<uint32_t>(e)) ==
                        windowed->event_name(static_cast<uint32_t>(e)),
                "windowed and whole reads differ in an event");
  fuzz::read_everything(*whole);
  return 0;
}
