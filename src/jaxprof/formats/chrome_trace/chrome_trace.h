// Chrome / Perfetto trace JSON importer: the `<host>.trace.json.gz` JAX writes beside the
// xplane, `perfetto_trace.json.gz`, and any `.json` / `.json.gz` in the Trace Event Format.
// Processes become planes (their `process_name` is the plane name, e.g. "/device:GPU:0"),
// threads become lines, complete (`X`), begin/end (`B`/`E`) and instant (`i`) events become
// events. See docs/chrome-trace.md for the mapping and what is lost against the xplane.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "jaxprof/formats/xplane/xplane.h"
#include "jaxprof/io/buffer.h"
#include "jaxprof/model/profile.h"

namespace jaxprof {

struct ChromeTraceOptions {
  // The events array is parsed in windows of about this many bytes, so memory stays near the
  // model's size rather than a multiple of the file. Small values are for tests.
  size_t window_bytes = size_t{4} << 20;
  bool release_pages = true;  // see Buffer::release
};

// Reads one trace into `profile` as host `host`. Every event is decoded now; lines are marked
// decoded once Profile::require_lines has put them on the profile's common clock. Throws
// InputError naming the file (with the byte offset in the decompressed JSON where known).
void import_chrome_trace(Profile& profile, std::shared_ptr<Buffer> buffer, const std::string& host,
                         const ChromeTraceOptions& options = {});

// A JSON number of microseconds ("1234.567", "9.9999999999999995e-07", "12") as integer
// picoseconds, computed from the decimal text (not through a double) and rounded to the
// nearest picosecond, ties to even. False if `text` is not a JSON number or out of range.
bool micros_text_to_ps(std::string_view text, int64_t& ps);

}  // namespace jaxprof
