// What the fuzz targets share: the input as a Buffer, and the walk over a decoded profile that
// reads every event, stat and metadata entry as the analyses do (decode only, no analysis).
//
// A target calls the decoder and lets InputError pass (bad input, refused as it should be); any
// other exception, a sanitizer report, a crash, a hang or an allocation past the fuzzer's limit is
// a finding. check() reports a broken expectation the same way.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "jaxprof/common/error.h"
#include "jaxprof/formats/xplane/xplane.h"
#include "jaxprof/io/buffer.h"
#include "jaxprof/model/profile.h"

namespace jaxprof::fuzz {

inline std::shared_ptr<Buffer> buffer_of(const uint8_t* data, size_t size, const char* name) {
  return Buffer::from_bytes(std::vector<uint8_t>(data, data + size), name);
}

// Aborts (a finding) when `ok` is false.
inline void check(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "fuzz check failed: %s\n", what);
  std::abort();
}

// An InputError that escapes a reader names the file it is about (the command line prints it).
inline void named(const InputError& e) {
  if (e.file().empty()) std::fprintf(stderr, "unnamed: %s\n", e.what());
  check(!e.file().empty(), "an InputError names no file");
}

// Every line's events as its importer scans them (Profile::scan_line, the path analyses take
// for lines they do not decode), then decoded: both must give the same events. Then every event's
// and metadata entry's stats, and the plane stats. Throws InputError where the bytes are bad.
inline void read_everything(Profile& p) {
  const size_t n_lines = p.lines.size();
  std::vector<uint8_t> all(p.event_metadata.size(), 1);
  std::vector<std::vector<ScannedEvent>> scanned(n_lines);
  bool scan_failed = false;
  try {
    for (uint32_t li = 0; li < n_lines; ++li) p.scan_line(li, all, scanned[li]);
  } catch (const InputError& e) {
    named(e);
    scan_failed = true;  // decoding reads more than scanning: it must fail too (below)
  }
  // visit_line reads an event's own stats in the same pass.
  const StringId names[] = {p.strings.find("hlo_op"), p.strings.find("correlation_id"),
                            p.strings.find("group_id")};
  try {
    for (uint32_t li = 0; li < n_lines && !scan_failed; ++li)
      p.visit_line(li, all, names,
                   [](const ScannedEvent&, std::span<const std::optional<StatValue>>) {});
  } catch (const InputError& e) {
    named(e);
  }
  try {
    p.require_all_lines();
  } catch (const InputError& e) {
    named(e);
    return;
  }
  check(!scan_failed, "a profile that decodes did not scan");
  for (uint32_t li = 0; li < n_lines; ++li) {
    const Line& line = p.lines[li];
    check(scanned[li].size() == line.event_count, "scan and decode differ in event count");
    for (uint32_t k = 0; k < line.event_count; ++k) {
      const ScannedEvent& s = scanned[li][k];
      uint32_t e = line.first_event + k;
      if (s.start_ps != p.events.start_ps[e] || s.duration_ps != p.events.duration_ps[e] ||
          s.metadata != p.events.metadata[e]) {
        std::fprintf(stderr,
                     "line %u event %u: scanned (%lld, %lld, metadata %u), decoded (%lld, %lld, "
                     "metadata %u)\n",
                     li, k, static_cast<long long>(s.start_ps),
                     static_cast<long long>(s.duration_ps), s.metadata,
                     static_cast<long long>(p.events.start_ps[e]),
                     static_cast<long long>(p.events.duration_ps[e]), p.events.metadata[e]);
        check(false, "scan and decode differ in an event");
      }
    }
  }
  // Stats stay in the file until read: a damaged one is an InputError here, as in an analysis.
  try {
    for (uint32_t li = 0; li < n_lines; ++li) {
      const Line& line = p.lines[li];
      for (uint32_t e = line.first_event; e < line.first_event + line.event_count; ++e) {
        for (const Stat& s : p.event_stats(line.plane, e)) (void)s.value.to_string();
        std::optional<StatValue> out[3];
        p.find_event_stats(line.plane, e, names, out);
        (void)p.event_display_name(e);
      }
    }
  } catch (const InputError& e) {
    named(e);
  }
  try {
    for (uint32_t m = 0; m < p.event_metadata.size(); ++m)
      for (const Stat& s : p.metadata_stats(m)) (void)s.value.to_string();
  } catch (const InputError& e) {
    named(e);
  }
  for (const Plane& plane : p.planes)
    for (const Stat& s : plane.stats) (void)s.value.to_string();
}

// Import options for a fuzz run: one thread (a finding replays the same way) and no page
// release (the input is not a mapped file).
inline ImportOptions one_thread() {
  ImportOptions options;
  options.threads = 1;
  options.release_pages = false;
  return options;
}

// Runs `import` (which fills a Profile), finish_import, then read_everything; bad input (an
// InputError naming the file) ends the run.
template <typename Import>
void import_and_read(Import&& import) {
  Profile p;
  try {
    import(p);
    finish_import(p);
  } catch (const InputError& e) {
    named(e);
    return;
  }
  read_everything(p);
}

}  // namespace jaxprof::fuzz
