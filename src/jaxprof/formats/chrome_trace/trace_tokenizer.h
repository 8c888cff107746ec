// The Chrome trace import's tokenizer: the file's bytes to events. The JSON around the events
// array is scanned here; the array itself goes to simdjson's On Demand API in windows, so memory
// stays near the model's size rather than a multiple of the file. On Demand skips what it is not
// asked for by counting brackets, so each window is checked to be the JSON a read of the whole
// file sees (docs/fuzzing.md): what separates elements, where each element ends, what follows
// the last one, and (event_fields.h) every member skipped.
#pragma once

#include <simdjson.h>

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "jaxprof/formats/chrome_trace/chrome_trace.h"
#include "jaxprof/formats/chrome_trace/event_fields.h"
#include "jaxprof/formats/chrome_trace/trace_import.h"

namespace jaxprof::chrome_trace {

// Where the tokenizer hands the elements of the events array, in file order.
class EventSink {
 public:
  virtual ~EventSink() = default;
  // An event (a JSON object): its members, views valid until the next call, and its bytes.
  virtual void event(const Fields& f, size_t offset, size_t length) = 0;
  // An element that is not an object. An element whose window is read again (a cut inside it) is
  // handed over again.
  virtual void not_an_event() = 0;
};

class TraceTokenizer {
 public:
  // Arg keys are interned into `strings` (through `cache`) as they are read.
  TraceTokenizer(const Buffer& buffer, const ChromeTraceOptions& options, StringTable& strings,
                 InternCache& cache, EventSink& sink);

  // Reads the document, an object with a "traceEvents" array or the array alone, handing every
  // element to the sink. Throws InputError at a byte offset (CutShort where the text stops inside
  // a value).
  void run();

 private:
  struct ArrayEnd {
    bool found = false;
    bool closed = false;  // at a ']' (else: the end of a bare array without one)
    size_t at = 0;        // offset of the ']' (or just past the last element)
  };

  struct Window {
    bool ok = false;
    bool definite = false;  // the error is in the file, not an artefact of the cut
    size_t next = 0;        // offset of the element after the last one read
    // `next` is just past an element, not past the comma after it: a window that starts there
    // must see a comma first (else it would take `{...} "x"` for two elements).
    bool needs_comma = false;
    std::string error;
    size_t error_offset = 0;
  };

  void read_object(size_t begin);
  size_t read_events(size_t begin, bool bare);
  ArrayEnd array_end(size_t pos, size_t limit, bool bare, bool quiet) const;
  size_t find_cut(size_t from) const;
  size_t load_window(size_t begin, size_t end);
  Window parse_window(size_t begin, size_t end, bool needs_comma = false);
  void step_past(Window& w, size_t after, size_t limit) const;
  bool separated(size_t from, size_t to, bool first, Window& w) const;
  bool skip_element(size_t at, size_t end, size_t& after, Window& w) const;
  bool ends_balanced(size_t offset, size_t length, size_t end, Window& w) const;
  bool tail_is_elements(size_t from, size_t end, bool needs_comma, Window& w) const;

  const Buffer* buf_;
  ChromeTraceOptions opt_;
  std::string_view text_;
  EventFieldReader fields_;
  EventSink* sink_;
  simdjson::ondemand::parser parser_;
  std::vector<char> scratch_;  // the window as a JSON array, padded for simdjson
};

}  // namespace jaxprof::chrome_trace
