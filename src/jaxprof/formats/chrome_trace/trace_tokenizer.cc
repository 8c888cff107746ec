#include "jaxprof/formats/chrome_trace/trace_tokenizer.h"

#include <algorithm>
#include <cstring>

namespace jaxprof::chrome_trace {

namespace od = simdjson::ondemand;

namespace {

// Window growth when a cut lands inside an event, and the window size beyond which the rest of
// the document is parsed at once.
constexpr size_t kGrowth = 4;
constexpr size_t kMaxWindow = size_t{64} << 20;

// Just past the object or array that starts at `at`, by its brackets (strings skipped), or npos
// where it is not closed within `t`. Runs over every event's bytes: strings, most of an event,
// are crossed with memchr (100 MB trace: 0.06 s of CPU, where a byte-by-byte scan took 0.17 s).
size_t bracket_end(std::string_view t, size_t at) {
  const char* const begin = t.data();
  const char* const end = begin + t.size();
  int depth = 0;
  for (const char* p = begin + at; p < end;) {
    const char c = *p;
    if (c == '"') {
      const char* from = ++p;
      while (true) {
        const auto* q = static_cast<const char*>(std::memchr(p, '"', static_cast<size_t>(end - p)));
        if (q == nullptr) return std::string_view::npos;
        const char* b = q;
        while (b > from && b[-1] == '\\') --b;
        p = q + 1;
        if ((q - b) % 2 == 0) break;  // not escaped
      }
      continue;
    }
    if (c == '{' || c == '[') {
      ++depth;
    } else if (c == '}' || c == ']') {
      if (--depth == 0) return static_cast<size_t>(p + 1 - begin);
    }
    ++p;
  }
  return std::string_view::npos;
}

// Scans the JSON around the events array (a handful of small members); the array itself goes
// to simdjson in windows.
class OuterScanner {
 public:
  explicit OuterScanner(std::string_view s) : s_(s) {}
  size_t pos = 0;

  void ws() {
    while (pos < s_.size() && is_ws(s_[pos])) ++pos;
  }
  bool at_end() const { return pos >= s_.size(); }
  char peek() const { return at_end() ? '\0' : s_[pos]; }

  // At a '"': the raw text between the quotes; moves past the closing quote.
  std::string_view string() {
    size_t start = ++pos;
    while (true) {
      size_t q = s_.find_first_of("\"\\", pos);
      if (q == std::string_view::npos) cut_short("a JSON string is not closed", start - 1);
      if (s_[q] == '\\') {
        pos = q + 2;
        continue;
      }
      pos = q + 1;
      return s_.substr(start, q - start);
    }
  }

  void skip_value() {
    ws();
    char c = peek();
    if (c == '"') {
      string();
      return;
    }
    if (c == '{' || c == '[') {
      size_t start = pos;
      int depth = 0;
      while (!at_end()) {
        char d = s_[pos];
        if (d == '"') {
          string();
          continue;
        }
        if (d == '{' || d == '[') {
          ++depth;
        } else if (d == '}' || d == ']') {
          if (--depth == 0) {
            ++pos;
            return;
          }
        }
        ++pos;
      }
      cut_short("a JSON object or array is not closed", start);
    }
    size_t start = pos;
    while (!at_end() && !std::strchr(",}] \t\r\n", s_[pos])) ++pos;
    if (pos == start) fail("invalid JSON: expected a value", start);
  }

 private:
  std::string_view s_;
};

}  // namespace

TraceTokenizer::TraceTokenizer(const Buffer& buffer, const ChromeTraceOptions& options,
                               StringTable& strings, InternCache& cache, EventSink& sink)
    : buf_(&buffer), opt_(options), text_(buffer.view()), fields_(strings, cache), sink_(&sink) {
  opt_.window_bytes = std::max<size_t>(opt_.window_bytes, 64);
}

void TraceTokenizer::run() {
  OuterScanner outer(text_);
  outer.ws();
  if (outer.peek() == '[') {
    // The JSON Array Format: the document is the events array; the closing ']' is optional.
    ++outer.pos;
    size_t end = read_events(outer.pos, /*bare=*/true);
    outer.pos = end;
    outer.ws();
    if (!outer.at_end()) fail("invalid JSON: data after the events array", outer.pos);
  } else if (outer.peek() == '{') {
    read_object(outer.pos + 1);
  } else {
    fail("not a Chrome trace: expected a JSON object or array", outer.pos);
  }
}

// The JSON Object Format from `begin`, just past its '{': the "traceEvents" array, and other
// members skipped.
void TraceTokenizer::read_object(size_t begin) {
  OuterScanner outer(text_);
  outer.pos = begin;
  bool found = false;
  outer.ws();
  if (outer.peek() == '}') {
    ++outer.pos;
  } else {
    while (true) {
      outer.ws();
      if (outer.peek() != '"') {
        if (outer.at_end()) cut_short("the JSON document is not closed", outer.pos);
        fail("invalid JSON: expected a member name", outer.pos);
      }
      std::string_view key = outer.string();
      outer.ws();
      if (outer.peek() != ':') fail("invalid JSON: expected ':'", outer.pos);
      ++outer.pos;
      outer.ws();
      if (key == "traceEvents" && !found) {
        if (outer.peek() != '[') fail("\"traceEvents\" is not an array", outer.pos);
        found = true;
        outer.pos = read_events(outer.pos + 1, /*bare=*/false);
      } else {
        outer.skip_value();
      }
      outer.ws();
      if (outer.peek() == ',') {
        ++outer.pos;
        continue;
      }
      if (outer.peek() == '}') {
        ++outer.pos;
        break;
      }
      if (outer.at_end()) cut_short("the JSON document is not closed", outer.pos);
      fail("invalid JSON: expected ',' or '}'", outer.pos);
    }
  }
  outer.ws();
  if (!outer.at_end()) fail("invalid JSON: data after the document", outer.pos);
  if (!found) fail("no \"traceEvents\" array: not a Chrome trace (Trace Event Format) file", 0);
}

// Parses the events array starting at `begin` (just past '['); returns the offset just past
// its closing ']' (or the end of the file for a bare array without one).
size_t TraceTokenizer::read_events(size_t begin, bool bare) {
  size_t pos = begin;
  size_t released = 0;
  bool need_comma = false;  // pos is just after an element: a comma must come first
  while (true) {
    while (pos < text_.size() && is_ws(text_[pos])) ++pos;
    if (pos >= text_.size()) {
      if (bare) return text_.size();  // the closing ']' is optional in the array format
      cut_short("the traceEvents array is not closed", text_.size());
    }
    if (text_[pos] == ']') return pos + 1;
    size_t want = opt_.window_bytes;
    while (true) {
      size_t cut = want >= kMaxWindow ? std::string_view::npos : find_cut(pos + want);
      ArrayEnd last;
      if (cut == std::string_view::npos) {
        // No later element boundary: the rest of the array is one window.
        last = array_end(pos, text_.size(), bare, /*quiet=*/false);
        cut = last.at;
      }
      Window w = parse_window(pos, cut, need_comma);
      if (w.ok) {
        if (opt_.release_pages && w.next - released >= (size_t{8} << 20)) {
          buf_->release(released, w.next);
          released = w.next;
        }
        if (last.found) return last.closed ? last.at + 1 : text_.size();
        pos = w.next;
        need_comma = w.needs_comma;
        break;
      }
      if (!last.found) {
        // The cut may lie beyond the end of the array (in members after it). The failed
        // window's events before w.next are committed: read on from there, not again.
        const size_t from = std::max(pos, w.next);
        ArrayEnd inside = array_end(from, cut, bare, /*quiet=*/true);
        if (inside.found && inside.closed) {
          Window exact = parse_window(from, inside.at, w.needs_comma);
          if (!exact.ok) fail(exact.error, exact.error_offset);
          return inside.at + 1;
        }
      }
      if (last.found || w.definite) fail(w.error, w.error_offset);
      // The cut landed inside an event (or a string): keep what was read, widen the window.
      if (w.next > pos) {
        pos = w.next;
        need_comma = w.needs_comma;
      } else {
        want *= kGrowth;
      }
    }
  }
}

// Finds the end of the events array by scanning elements from `pos` (an element start) up to
// `limit`. Only for the last window and for failed windows, so its scalar speed is fine.
TraceTokenizer::ArrayEnd TraceTokenizer::array_end(size_t pos, size_t limit, bool bare,
                                                   bool quiet) const {
  OuterScanner sc(text_.substr(0, limit));
  sc.pos = pos;
  ArrayEnd out;
  try {
    while (true) {
      sc.ws();
      if (sc.peek() == ']') {
        out = {true, true, sc.pos};
        return out;
      }
      if (sc.at_end()) break;
      size_t element_end = 0;
      sc.skip_value();
      element_end = sc.pos;
      sc.ws();
      if (sc.peek() == ',') {
        ++sc.pos;
        continue;
      }
      if (sc.peek() == ']') {
        out = {true, true, sc.pos};
        return out;
      }
      if (sc.at_end()) {
        if (bare && limit == text_.size()) return {true, false, element_end};
        break;
      }
      fail("invalid JSON: expected ',' or ']' after an event", sc.pos);
    }
    if (bare && limit == text_.size()) {
      // Trailing commas of an unterminated array.
      size_t end = limit;
      while (end > pos && (is_ws(text_[end - 1]) || text_[end - 1] == ',')) --end;
      return {true, false, end};
    }
    if (!quiet) cut_short("the traceEvents array is not closed", limit);
  } catch (const InputError&) {
    if (!quiet) throw;
  }
  return out;
}

// The first offset at or after `from` that ends an array element: just past a '}' followed by
// ',' and the '{' of the next element. Strings cannot hold `},{"` unescaped except at their
// end, and a wrong guess only makes the window fail and grow.
size_t TraceTokenizer::find_cut(size_t from) const {
  while (from < text_.size()) {
    const void* hit = std::memchr(text_.data() + from, '}', text_.size() - from);
    if (hit == nullptr) return std::string_view::npos;
    size_t brace = static_cast<size_t>(static_cast<const char*>(hit) - text_.data());
    size_t k = brace + 1;
    while (k < text_.size() && is_ws(text_[k])) ++k;
    if (k < text_.size() && text_[k] == ',') {
      ++k;
      while (k < text_.size() && is_ws(text_[k])) ++k;
      if (k < text_.size() && text_[k] == '{') {
        ++k;
        while (k < text_.size() && is_ws(text_[k])) ++k;
        if (k < text_.size() && (text_[k] == '"' || text_[k] == '}')) return brace + 1;
      }
    }
    from = brace + 1;
  }
  return std::string_view::npos;
}

// Copies text[begin, end) into scratch_ as the document `[` + text + `]`, padded as simdjson
// needs; returns the document's length.
size_t TraceTokenizer::load_window(size_t begin, size_t end) {
  size_t len = end - begin;
  size_t doc_len = len + 2;
  scratch_.resize(doc_len + simdjson::SIMDJSON_PADDING);
  scratch_[0] = '[';
  std::memcpy(scratch_.data() + 1, text_.data() + begin, len);
  scratch_[len + 1] = ']';
  std::memset(scratch_.data() + doc_len, 0, simdjson::SIMDJSON_PADDING);
  return doc_len;
}

// Parses `[` + text[begin, end) + `]` and hands every element in it to the sink. With
// `needs_comma`, begin is just past an element, and the first element must follow a comma.
TraceTokenizer::Window TraceTokenizer::parse_window(size_t begin, size_t end, bool needs_comma) {
  fields_.reset();
  Window w;
  w.next = begin;
  w.needs_comma = needs_comma;
  const size_t doc_len = load_window(begin, end);
  const char* base = scratch_.data();
  auto file_offset = [&](const char* at) {
    return begin + static_cast<size_t>(std::max<ptrdiff_t>(at - base - 1, 0));
  };
  auto failed = [&](simdjson::error_code code, od::document& doc) {
    const char* at = nullptr;
    if (!doc.current_location().get(at) && at < base + doc_len - 1) {
      // Away from the cut: a real error in the file.
      w.definite = true;
      w.error_offset = file_offset(at);
    } else {
      w.error_offset = w.next;
    }
    const std::string member =
        fields_.member().empty()
            ? std::string("a trace event member")
            : "the trace event member \"" + std::string(fields_.member().substr(0, 64)) + "\"";
    if (code == simdjson::INCORRECT_TYPE)
      w.error = "wrong shape: " + member +
                " has an unexpected type (\"ph\" and \"name\" must be strings, \"args\" an "
                "object, \"ts\", \"dur\", \"pid\" and \"tid\" numbers or strings)";
    else if (fields_.bad_unread()) {
      w.error = std::string(w.definite ? "invalid JSON: " : "truncated or invalid JSON: ") +
                member + " is not a well-formed JSON value";
      if (w.definite) w.error_offset = file_offset(fields_.bad_value());
    } else
      w.error = std::string(w.definite ? "invalid JSON: " : "truncated or invalid JSON: ") +
                simdjson::error_message(code);
    return w;
  };

  od::document doc;
  auto code = parser_.iterate(base, doc_len, scratch_.size()).get(doc);
  if (code) {
    w.error = std::string("invalid JSON: ") + simdjson::error_message(code);
    w.error_offset = begin;
    return w;
  }
  od::array events;
  if ((code = doc.get_array().get(events))) return failed(code, doc);
  // Where the text before the next element starts: On Demand skips an element it is not asked
  // to read by counting brackets, so what separates elements is checked here (a window whose
  // first elements are `"a", "b": {...}}` read as valid otherwise, where the whole file does
  // not).
  size_t gap = begin;
  bool first = !needs_comma;
  for (auto element : events) {
    od::value v;
    if ((code = std::move(element).get(v))) return failed(code, doc);
    const char* start = v.raw_json_token().data();
    if (!separated(gap, file_offset(start), first, w)) return w;
    first = false;
    od::json_type type;
    if ((code = v.type().get(type))) return failed(code, doc);
    if (type != od::json_type::object) {
      // Not an event; skip it.
      sink_->not_an_event();
      const size_t at = file_offset(start);
      if (!skip_element(at, end, gap, w)) return w;
      // On Demand's end of it must be the scan's, as for events below: where they differ the
      // element is not valid JSON, and at a window's end On Demand would end the array there
      // quietly (found by fuzzing: small windows accepted what the whole file refuses).
      std::string_view raw = v.raw_json_token();
      if (type == od::json_type::array) {
        od::array a;
        if ((code = v.get_array().get(a)) || (code = a.raw_json().get(raw)))
          return failed(code, doc);
      }
      const char* raw_end = raw.data() + raw.size();
      while (raw_end > raw.data() && is_ws(raw_end[-1])) --raw_end;
      if (file_offset(raw_end) != gap) {
        w.definite = true;
        w.error = "invalid JSON: expected ',' or ']' after an event";
        w.error_offset = gap;
        return w;
      }
      step_past(w, gap, end);
      continue;
    }
    Fields f;
    if ((code = fields_.read(v, f))) return failed(code, doc);
    fields_.forget_member();
    const char* after = nullptr;
    if (doc.current_location().get(after)) after = base + doc_len - 1;
    size_t offset = file_offset(start);
    size_t length = static_cast<size_t>(after - start);
    if (!ends_balanced(offset, length, end, w)) return w;
    sink_->event(f, offset, length);
    gap = offset + length;
    step_past(w, gap, end);  // the next window starts at the following element
  }
  const char* at = nullptr;
  if (!doc.current_location().get(at)) {
    // Tokens after the array: the cut was not where the array ends.
    w.error = "invalid JSON: data after the events array";
    w.error_offset = file_offset(at);
    return w;
  }
  if (!tail_is_elements(w.next, end, w.needs_comma, w)) return w;
  w.ok = true;
  step_past(w, end, text_.size());  // just past an element's '}': over the comma to the next one
  return w;
}

// Sets w past the element that ends at `after` and the comma after it, if there is one.
void TraceTokenizer::step_past(Window& w, size_t after, size_t limit) const {
  size_t next = after;
  while (next < limit && is_ws(text_[next])) ++next;
  const bool comma = next < limit && text_[next] == ',';
  w.next = comma ? next + 1 : next;
  w.needs_comma = !comma;
}

// Whether [from, to) is what may stand before an array element: white space, and a comma
// unless it is the window's first. Sets w's error otherwise.
bool TraceTokenizer::separated(size_t from, size_t to, bool first, Window& w) const {
  size_t k = from;
  while (k < to && is_ws(text_[k])) ++k;
  const bool comma = !first && k < to && text_[k] == ',';
  if (comma)
    for (++k; k < to && is_ws(text_[k]);) ++k;
  if (k == to && (first || comma)) return true;
  w.definite = true;
  w.error = "invalid JSON: expected ',' or ']' after an event";
  w.error_offset = std::min(k, to);
  return false;
}

// Sets `after` just past the element at `at` (not an event: rare, so a scalar scan is fine).
// Sets w's error where it does not end before `end`.
bool TraceTokenizer::skip_element(size_t at, size_t end, size_t& after, Window& w) const {
  OuterScanner sc(text_.substr(0, end));
  sc.pos = at;
  try {
    sc.skip_value();
    after = sc.pos;
    return true;
  } catch (const CutShort&) {
    w.error = "truncated or invalid JSON";
    w.error_offset = at;
  } catch (const InputError& e) {
    w.definite = true;
    w.error = e.reason();
    w.error_offset = static_cast<size_t>(e.offset());
  }
  return false;
}

// Whether the event read at [offset, offset + length) ends where its brackets balance. On
// Demand skips members it is not asked for by counting brackets, so its end of an event with a
// stray ':' or '}' inside can differ from where the event's brackets balance; the element is
// then not valid JSON, as a read of the whole file finds. (At the window's last element On
// Demand's end is the window's: white space may follow.) Sets w's error otherwise.
bool TraceTokenizer::ends_balanced(size_t offset, size_t length, size_t end, Window& w) const {
  const size_t balanced = bracket_end(text_.substr(0, end), offset);
  bool same_end = balanced <= offset + length;
  for (size_t k = balanced; same_end && k < offset + length; ++k) same_end = is_ws(text_[k]);
  if (same_end) return true;
  w.definite = true;
  w.error = "invalid JSON: expected ',' or ']' after an event";
  w.error_offset = std::min(balanced, offset + length);
  return false;
}

// Whether [from, end) is array elements and commas only. simdjson's On Demand front end can
// end an iteration quietly at a structural error (a stray '}' after an element that is not an
// event), so what follows the last event read is checked here; usually nothing does. Sets w's
// error otherwise (definite unless the window's end cut a value short).
bool TraceTokenizer::tail_is_elements(size_t from, size_t end, bool needs_comma, Window& w) const {
  OuterScanner sc(text_.substr(0, end));
  sc.pos = from;
  try {
    while (true) {
      sc.ws();
      if (sc.at_end()) return true;
      if (!needs_comma) {
        sc.skip_value();
        sc.ws();
        if (sc.at_end()) return true;
      }
      // Just past an element (`from` may be one): the next one follows a comma.
      if (sc.peek() != ',') {
        w.definite = true;
        w.error = "invalid JSON: expected ',' or ']' after an event";
        w.error_offset = sc.pos;
        return false;
      }
      ++sc.pos;
      needs_comma = false;
    }
  } catch (const CutShort&) {
    w.error = "truncated or invalid JSON";
    w.error_offset = w.next;
  } catch (const InputError& e) {
    w.definite = true;
    w.error = e.reason();
    w.error_offset = static_cast<size_t>(e.offset());
  }
  return false;
}

}  // namespace jaxprof::chrome_trace
