#include "jaxprof/formats/chrome_trace/chrome_trace.h"

#include <simdjson.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <deque>
#include <limits>
#include <map>
#include <mutex>
#include <numeric>
#include <unordered_map>
#include <vector>

#include "jaxprof/common/error.h"
#include "jaxprof/formats/chrome_trace/json_value_check.h"
#include "jaxprof/io/base64.h"
#include "jaxprof/model/time_range.h"

namespace jaxprof {

namespace od = simdjson::ondemand;

bool micros_text_to_ps(std::string_view t, int64_t& ps) {
  size_t i = 0;
  const size_t n = t.size();
  auto is_digit = [&](size_t k) { return k < n && t[k] >= '0' && t[k] <= '9'; };
  bool negative = false;
  if (i < n && t[i] == '-') {
    negative = true;
    ++i;
  }
  if (!is_digit(i)) return false;
  // value = m * 10^scale microseconds; digits beyond uint64 precision only set `sticky`.
  uint64_t m = 0;
  int64_t scale = 0;
  bool sticky = false;
  constexpr uint64_t kMaxM = (std::numeric_limits<uint64_t>::max() - 9) / 10;
  auto digit = [&](int d, bool fraction) {
    if (m <= kMaxM) {
      m = m * 10 + static_cast<uint64_t>(d);
      if (fraction) --scale;
    } else {
      if (!fraction) ++scale;
      sticky |= d != 0;
    }
  };
  while (is_digit(i)) digit(t[i++] - '0', false);
  if (i < n && t[i] == '.') {
    ++i;
    if (!is_digit(i)) return false;
    while (is_digit(i)) digit(t[i++] - '0', true);
  }
  if (i < n && (t[i] == 'e' || t[i] == 'E')) {
    ++i;
    bool exp_negative = false;
    if (i < n && (t[i] == '+' || t[i] == '-')) exp_negative = t[i++] == '-';
    if (!is_digit(i)) return false;
    int64_t e = 0;
    while (is_digit(i)) e = std::min<int64_t>(e * 10 + (t[i++] - '0'), 1000000);
    scale += exp_negative ? -e : e;
  }
  if (i != n) return false;
  scale += 6;  // microseconds -> picoseconds
  uint64_t result = 0;
  if (m == 0) {
    result = 0;
  } else if (scale >= 0) {
    if (scale > 19) return false;
    result = m;
    for (int64_t k = 0; k < scale; ++k) {
      if (result > std::numeric_limits<uint64_t>::max() / 10) return false;
      result *= 10;
    }
  } else if (-scale <= 19) {
    uint64_t p10 = 1;
    for (int64_t k = 0; k < -scale; ++k) p10 *= 10;
    result = m / p10;
    uint64_t rem = m % p10, half = p10 / 2;
    if (rem > half || (rem == half && (sticky || (result & 1)))) ++result;
  }  // else: below 0.2 ps, rounds to 0
  if (result > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return false;
  ps = negative ? -static_cast<int64_t>(result) : static_cast<int64_t>(result);
  return true;
}

namespace {

constexpr uint32_t kNoStats = std::numeric_limits<uint32_t>::max();
// Markers in Record::dur_ps for begin/end events until they are paired.
constexpr int64_t kBegin = -1, kEnd = -2;
// Window growth when a cut lands inside an event, and the window size beyond which the rest of
// the document is parsed at once.
constexpr size_t kGrowth = 4;
constexpr size_t kMaxWindow = size_t{64} << 20;

bool is_ws(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_ws(s.back())) s.remove_suffix(1);
  return s;
}

// A pid or tid written as a string names the process or thread by its text.
std::string_view unquote(std::string_view s) {
  return s.size() >= 2 && s.front() == '"' ? s.substr(1, s.size() - 2) : s;
}

[[noreturn]] void fail(const std::string& reason, int64_t offset) {
  throw InputError("", reason, offset);
}

// The document stops inside a value: the file was cut short (import_chrome_trace words it).
class CutShort : public InputError {
 public:
  CutShort(const std::string& what, int64_t offset) : InputError("", what, offset) {}
};

[[noreturn]] void cut_short(const std::string& what, int64_t offset) {
  throw CutShort(what, offset);
}

// Picoseconds as the microseconds a trace writes ("12.5 us").
std::string micros(int64_t ps) {
  std::string whole = std::to_string(ps / 1000000);
  int64_t frac = ps % 1000000;
  if (frac == 0) return whole + " us";
  std::string f = std::to_string(frac < 0 ? -frac : frac);
  f.insert(0, 6 - f.size(), '0');
  while (f.back() == '0') f.pop_back();
  return (ps < 0 && whole == "0" ? "-" : "") + whole + "." + f + " us";
}

// The HLO instruction name from "%fusion.3 = f32[...] fusion(...)" (TPU long names).
std::string_view hlo_name_from_text(std::string_view name) {
  if (!name.starts_with('%')) return {};
  size_t eq = name.find(" = ");
  if (eq == std::string_view::npos) return {};
  return name.substr(1, eq - 1);
}

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

// One event as read from the file, before planes and lines exist.
struct Record {
  int64_t ts_ps;
  int64_t dur_ps;  // or kBegin / kEnd
  uint32_t thread;
  StringId name;     // the full name: TPU ops' "long_name" arg, else "name"
  StringId display;  // "name" when the full name came from "long_name"
  StringId hlo_op;
  uint32_t module;
  uint32_t stats;  // index into spans_, or kNoStats
  // The device's own clock (TPU ops' device_offset_ps / device_duration_ps args), or kNoStat.
  int64_t device_start_ps, device_duration_ps;
};

// The fields of one trace event that the import needs; views live as long as the window.
struct Fields {
  char ph = 0;
  bool has_ts = false, has_dur = false;
  std::string_view pid, tid, ts, dur, name;
  std::string_view hlo_op, hlo_module, long_name, program_id, arg_name;
  std::string_view device_offset, device_duration;  // raw JSON tokens
  // Members of jaxprof's own exports (render/perfetto/perfetto.h): a process's host, a derived track, an
  // embedded HloProto.
  std::string_view arg_host, proto;
  bool derived = false, bare_module = false;
  bool has_args = false;
};

struct Process {
  std::string key;  // pid as written (number or string)
  std::string name;
  std::string host;  // jaxprof exports name each process's host
};
struct Thread {
  uint32_t process;
  std::string key;
  std::string name;
  uint32_t line = 0;
  bool derived = false;  // a track jaxprof derived when exporting: not read back
};

std::optional<int64_t> number_of(std::string_view key) {
  int64_t v = 0;
  auto [p, ec] = std::from_chars(key.data(), key.data() + key.size(), v);
  if (ec == std::errc() && p == key.data() + key.size()) return v;
  return std::nullopt;
}

// "program_id" as a string or number; XLA ids are unsigned 64-bit.
// A non-negative picosecond count written as a JSON number or string ("194437036250").
int64_t picoseconds_of(std::string_view text) {
  if (text.size() >= 2 && text.front() == '"') text = text.substr(1, text.size() - 2);
  int64_t v = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  return ec == std::errc() && p == text.data() + text.size() && v >= 0 ? v : Events::kNoStat;
}

ProgramId program_of(std::string_view text) {
  if (text.size() >= 2 && text.front() == '"') text = text.substr(1, text.size() - 2);
  uint64_t u = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), u);
  if (ec == std::errc() && p == text.data() + text.size()) return u;
  int64_t i = 0;
  auto [q, ec2] = std::from_chars(text.data(), text.data() + text.size(), i);
  if (ec2 == std::errc() && q == text.data() + text.size()) return static_cast<uint64_t>(i);
  return kNoProgram;
}

// A direct-mapped cache in front of StringTable::intern_copy: trace events repeat a few
// hundred names and keys millions of times, and most lookups then cost one short memcmp.
class InternCache {
 public:
  StringId intern(StringTable& table, std::string_view s) {
    if (s.empty()) return 0;
    uint64_t h = s.size() * 0x9E3779B97F4A7C15ull;
    size_t n = std::min<size_t>(s.size(), 16);
    for (size_t i = 0; i < n; ++i) h = (h ^ static_cast<uint8_t>(s[i])) * 0x100000001B3ull;
    h ^= static_cast<uint8_t>(s.back());
    Slot& slot = slots_[(h >> 20) % kSlots];
    if (slot.text.size() == s.size() && std::memcmp(slot.text.data(), s.data(), s.size()) == 0)
      return slot.id;
    slot.id = table.intern_copy(s);
    slot.text = table[slot.id];
    return slot.id;
  }

 private:
  static constexpr size_t kSlots = 4096;
  struct Slot {
    std::string_view text;
    StringId id = 0;
  };
  std::vector<Slot> slots_ = std::vector<Slot>(kSlots);
};

class ChromeTraceImporter : public EventSource {
 public:
  ChromeTraceImporter(Profile& p, std::shared_ptr<Buffer> buf, const std::string& host,
                      const ChromeTraceOptions& opt)
      : p_(&p), buf_(std::move(buf)), opt_(opt), text_(buf_->view()) {
    Profile::FileSlots slots = p_->add_file(host, buf_);
    host_index_ = slots.host;
    buffer_index_ = slots.buffer;
    source_index_ = slots.source;
    opt_.window_bytes = std::max<size_t>(opt_.window_bytes, 64);
  }

  void run() {
    // Reserving for the densest plausible trace costs address space, not memory: untouched
    // pages are never faulted in, and growth never copies.
    records_.reserve(text_.size() / 64 + 16);
    spans_.reserve(text_.size() / 64 + 16);
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
      ++outer.pos;
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
    } else {
      fail("not a Chrome trace: expected a JSON object or array", outer.pos);
    }
    if (opt_.release_pages) buf_->release(0, buf_->size());
    finish();
    p_ = nullptr;
  }

  void decode_lines(Profile& profile, const std::vector<uint32_t>& lines) override {
    // Events are in place; only the shift to the profile's common time zero is left.
    int64_t shift_ps = 0;  // within range: finish_import checked it
    if (!ps_since(profile.hosts[host_index_].base_ns, profile.base_ns, shift_ps))
      throw InputError(buf_->path(),
                       "its clock is too far from the other files' to be one timeline");
    for (uint32_t li : lines) {
      Line& line = profile.lines[li];
      if (shift_ps != 0)
        for (uint32_t e = line.first_event; e < line.first_event + line.event_count; ++e)
          profile.events.start_ps[e] += shift_ps;
      line.decoded = true;
    }
  }

  std::vector<Stat> event_stats(const Profile& p, uint32_t, uint32_t e) const override {
    uint32_t idx = p.events.raw[e];
    std::vector<Stat> out;
    if (idx == kNoStats) return out;
    // Plain variables, not a structured binding: the lambda below captures them.
    const size_t offset = spans_[idx].first;
    const uint32_t length = spans_[idx].second;
    thread_local od::parser parser;
    thread_local std::vector<char> scratch;
    scratch.resize(length + simdjson::SIMDJSON_PADDING);
    std::memcpy(scratch.data(), text_.data() + offset, length);
    od::document doc;
    if (parser.iterate(scratch.data(), length, scratch.size()).get(doc)) return out;
    // Views into the file for text that needs no unescaping.
    auto in_file = [&](std::string_view s) {
      return text_.substr(offset + static_cast<size_t>(s.data() - scratch.data()), s.size());
    };
    od::object event;
    if (doc.get_object().get(event)) return out;
    for (auto member : event) {
      od::field f;
      std::string_view key;
      if (std::move(member).get(f) || f.unescaped_key().get(key)) return out;
      if (key != "args") continue;
      od::object args;
      if (f.value().get_object().get(args)) return out;
      for (auto arg : args) {
        od::field a;
        std::string_view name;
        if (std::move(arg).get(a) || a.unescaped_key().get(name)) return out;
        Stat s;
        s.name = p.strings.find(name);
        if (s.name == UINT32_MAX) continue;
        od::value& v = a.value();
        od::json_type type;
        if (v.type().get(type)) return out;
        switch (type) {
          case od::json_type::string: {
            std::string_view raw = trim(v.raw_json_token());
            s.value.kind = StatKind::kString;
            if (raw.find('\\') == std::string_view::npos) {
              s.value.str = in_file(raw.substr(1, raw.size() - 2));
            } else {
              std::string_view text;
              if (v.get_string().get(text)) return out;
              s.value.str = keep(text);
            }
            break;
          }
          case od::json_type::number: {
            od::number_type nt;
            if (v.get_number_type().get(nt)) return out;
            if (nt == od::number_type::signed_integer) {
              s.value.kind = StatKind::kInt64;
              if (v.get_int64().get(s.value.i)) return out;
            } else if (nt == od::number_type::unsigned_integer) {
              s.value.kind = StatKind::kUint64;
              if (v.get_uint64().get(s.value.u)) return out;
            } else {
              s.value.kind = StatKind::kDouble;
              if (v.get_double().get(s.value.d)) return out;
            }
            break;
          }
          case od::json_type::boolean: {
            bool b = false;
            if (v.get_bool().get(b)) return out;
            s.value.kind = StatKind::kString;
            s.value.str = b ? "true" : "false";
            break;
          }
          case od::json_type::null:
            continue;
          case od::json_type::object:
          case od::json_type::array: {
            // Nested values stay JSON text.
            std::string_view raw;
            if (type == od::json_type::object) {
              od::object o;
              if (v.get_object().get(o) || o.raw_json().get(raw)) return out;
            } else {
              od::array arr;
              if (v.get_array().get(arr) || arr.raw_json().get(raw)) return out;
            }
            s.value.kind = StatKind::kString;
            s.value.str = in_file(trim(raw));
            break;
          }
        }
        out.push_back(s);
      }
    }
    return out;
  }

  std::vector<Stat> metadata_stats(const Profile&, uint32_t) const override { return {}; }

 private:
  // Storage for unescaped strings handed out by event_stats.
  std::string_view keep(std::string_view s) const {
    std::lock_guard<std::mutex> lock(kept_mutex_);
    return kept_.emplace_back(s);
  }

  // Parses the events array starting at `begin` (just past '['); returns the offset just past
  // its closing ']' (or the end of the file for a bare array without one).
  size_t read_events(size_t begin, bool bare) {
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

  struct ArrayEnd {
    bool found = false;
    bool closed = false;  // at a ']' (else: the end of a bare array without one)
    size_t at = 0;        // offset of the ']' (or just past the last element)
  };

  // Finds the end of the events array by scanning elements from `pos` (an element start) up to
  // `limit`. Only for the last window and for failed windows, so its scalar speed is fine.
  ArrayEnd array_end(size_t pos, size_t limit, bool bare, bool quiet) const {
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
  size_t find_cut(size_t from) const {
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

  // Parses `[` + text[begin, end) + `]` and commits every event in it. With `needs_comma`, begin
  // is just past an element, and the first element must follow a comma.
  Window parse_window(size_t begin, size_t end, bool needs_comma = false) {
    member_ = {};
    bad_unread_ = false;
    Window w;
    w.next = begin;
    w.needs_comma = needs_comma;
    // Past the element that ends at `after` and the comma after it, if there is one.
    auto step_past = [&](size_t after, size_t limit) {
      size_t next = after;
      while (next < limit && is_ws(text_[next])) ++next;
      const bool comma = next < limit && text_[next] == ',';
      w.next = comma ? next + 1 : next;
      w.needs_comma = !comma;
    };
    size_t len = end - begin;
    size_t doc_len = len + 2;
    scratch_.resize(doc_len + simdjson::SIMDJSON_PADDING);
    scratch_[0] = '[';
    std::memcpy(scratch_.data() + 1, text_.data() + begin, len);
    scratch_[len + 1] = ']';
    std::memset(scratch_.data() + doc_len, 0, simdjson::SIMDJSON_PADDING);
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
          member_.empty() ? std::string("a trace event member")
                          : "the trace event member \"" + std::string(member_.substr(0, 64)) + "\"";
      if (code == simdjson::INCORRECT_TYPE)
        w.error = "wrong shape: " + member +
                  " has an unexpected type (\"ph\" and \"name\" must be strings, \"args\" an "
                  "object, \"ts\", \"dur\", \"pid\" and \"tid\" numbers or strings)";
      else if (bad_unread_) {
        w.error = std::string(w.definite ? "invalid JSON: " : "truncated or invalid JSON: ") +
                  member + " is not a well-formed JSON value";
        if (w.definite) w.error_offset = file_offset(bad_value_);
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
        ++counts_.malformed;
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
        step_past(gap, end);
        continue;
      }
      Fields f;
      if ((code = read_event(v, f))) return failed(code, doc);
      member_ = {};  // a view into the parser's strings: not for a later error
      const char* after = nullptr;
      if (doc.current_location().get(after)) after = base + doc_len - 1;
      size_t offset = file_offset(start);
      size_t length = static_cast<size_t>(after - start);
      // On Demand skips members it is not asked for by counting brackets, so its end of an event
      // with a stray ':' or '}' inside can differ from where the event's brackets balance; the
      // element is then not valid JSON, as a read of the whole file finds.
      // (At the window's last element On Demand's end is the window's: white space may follow.)
      const size_t balanced = bracket_end(text_.substr(0, end), offset);
      bool same_end = balanced <= offset + length;
      for (size_t k = balanced; same_end && k < offset + length; ++k) same_end = is_ws(text_[k]);
      if (!same_end) {
        w.definite = true;
        w.error = "invalid JSON: expected ',' or ']' after an event";
        w.error_offset = std::min(balanced, offset + length);
        return w;
      }
      commit(f, offset, length);
      gap = offset + length;
      step_past(gap, end);  // the next window starts at the following element
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
    step_past(end, text_.size());  // just past an element's '}': over the comma to the next one
    return w;
  }

  // Whether [from, to) is what may stand before an array element: white space, and a comma
  // unless it is the window's first. Sets w's error otherwise.
  bool separated(size_t from, size_t to, bool first, Window& w) const {
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
  bool skip_element(size_t at, size_t end, size_t& after, Window& w) const {
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

  // Whether [from, end) is array elements and commas only. simdjson's On Demand front end can
  // end an iteration quietly at a structural error (a stray '}' after an element that is not an
  // event), so what follows the last event read is checked here; usually nothing does. Sets w's
  // error otherwise (definite unless the window's end cut a value short).
  bool tail_is_elements(size_t from, size_t end, bool needs_comma, Window& w) const {
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

  simdjson::error_code read_event(od::value& v, Fields& f) {
    member_ = {};
    bad_unread_ = false;
    od::object obj;
    auto code = v.get_object().get(obj);
    if (code) return code;
    for (auto member : obj) {
      od::field field;
      std::string_view key;
      if ((code = std::move(member).get(field))) return code;
      if ((code = field.unescaped_key().get(key))) return code;
      member_ = key;
      od::value& value = field.value();
      if (key == "ph") {
        std::string_view ph;
        if ((code = value.get_string().get(ph))) return code;
        f.ph = ph.empty() ? '?' : ph[0];
      } else if (key == "ts") {
        if ((code = scalar_token(value, f.ts, /*check=*/false))) return code;
        f.has_ts = true;
      } else if (key == "dur") {
        if ((code = scalar_token(value, f.dur, /*check=*/false))) return code;
        f.has_dur = true;
      } else if (key == "pid") {
        if ((code = scalar_token(value, f.pid))) return code;
        f.pid = unquote(f.pid);
      } else if (key == "tid") {
        if ((code = scalar_token(value, f.tid))) return code;
        f.tid = unquote(f.tid);
      } else if (key == "name") {
        if ((code = value.get_string().get(f.name))) return code;
      } else if (key == "args") {
        od::object args;
        if ((code = value.get_object().get(args))) return code;
        f.has_args = true;
        for (auto arg_member : args) {
          od::field arg;
          std::string_view arg_key;
          if ((code = std::move(arg_member).get(arg))) return code;
          if ((code = arg.unescaped_key().get(arg_key))) return code;
          member_ = arg_key;
          intern_arg_key(arg_key);
          od::value& arg_value = arg.value();
          if (arg_key == "hlo_op") {
            if ((code = arg_value.get_string().get(f.hlo_op))) return code;
          } else if (arg_key == "hlo_module") {
            if ((code = arg_value.get_string().get(f.hlo_module))) return code;
          } else if (arg_key == "long_name") {
            if ((code = arg_value.get_string().get(f.long_name))) return code;
          } else if (arg_key == "program_id") {
            if ((code = scalar_token(arg_value, f.program_id))) return code;
          } else if (arg_key == "device_offset_ps") {
            if ((code = scalar_token(arg_value, f.device_offset))) return code;
          } else if (arg_key == "device_duration_ps") {
            if ((code = scalar_token(arg_value, f.device_duration))) return code;
          } else if (arg_key == "name") {
            // process_name / thread_name metadata; a non-string is not a name.
            std::string_view s;
            if (arg_value.get_string().get(s) == simdjson::SUCCESS)
              f.arg_name = s;
            else if ((code = check_unread(arg_value)))
              return code;
          } else if (f.ph != 'M' || !read_export_arg(arg_key, arg_value, f)) {
            if ((code = check_unread(arg_value))) return code;
          }
        }
      } else if ((code = check_unread(value))) {
        return code;
      }
    }
    return simdjson::SUCCESS;
  }

  // SUCCESS when `text` is one JSON value; else an error that parse_window's message says is in
  // the member read, at the value's start.
  simdjson::error_code not_json(std::string_view text) {
    if (is_json_value(text)) return simdjson::SUCCESS;
    bad_unread_ = true;
    bad_value_ = text.data();
    return simdjson::TAPE_ERROR;
  }

  // A scalar member read from its text (a number, or an id that may be quoted): the text,
  // checked (On Demand does not check a token it is not asked to convert). A container is the
  // wrong type.
  simdjson::error_code scalar_token(od::value& value, std::string_view& out, bool check = true) {
    out = trim(value.raw_json_token());
    if (!out.empty() && (out[0] == '{' || out[0] == '[')) return simdjson::INCORRECT_TYPE;
    return check ? not_json(out) : simdjson::SUCCESS;
  }
  // A member the import does not read. On Demand skips it by counting brackets and never looks
  // inside, so it is checked here: a file broken there is refused, not read as if it were
  // sound (json_value_check.h).
  simdjson::error_code check_unread(od::value& value) {
    std::string_view text = value.raw_json_token();
    if (!text.empty() && text[0] == '{') {
      od::object o;
      if (auto code = value.get_object().get(o)) return code;
      if (auto code = o.raw_json().get(text)) return code;
    } else if (!text.empty() && text[0] == '[') {
      od::array a;
      if (auto code = value.get_array().get(a)) return code;
      if (auto code = a.raw_json().get(text)) return code;
    }
    return not_json(text);
  }

  // The metadata members jaxprof's exports add. Returns false for a member it does not read
  // (another key, or a value of another type: ignored, as the caller checks).
  static bool read_export_arg(std::string_view key, od::value& value, Fields& f) {
    std::string_view text;
    bool flag = false;
    if (key == "host" && value.get_string().get(text) == simdjson::SUCCESS) {
      f.arg_host = text;
    } else if (key == "proto" && value.get_string().get(text) == simdjson::SUCCESS) {
      f.proto = text;
    } else if (key == "jaxprof_derived" && value.get_bool().get(flag) == simdjson::SUCCESS) {
      f.derived = flag;
    } else if (key == "bare_module" && value.get_bool().get(flag) == simdjson::SUCCESS) {
      f.bare_module = flag;
    } else {
      return false;
    }
    return true;
  }

  // An HloProto a jaxprof export carries: into the profile's HLO index (a bad one is skipped with
  // a warning, as the xplane importer does).
  void add_embedded_hlo(const Fields& f) {
    std::optional<std::vector<uint8_t>> bytes = base64_decode(f.proto);
    if (!bytes) {
      p_->warnings.push_back(buf_->path() + ": skipped an embedded HloProto: not base64");
      return;
    }
    auto buffer = Buffer::from_bytes(std::move(*bytes), buf_->path() + "!hlo");
    int64_t program = f.program_id.empty() || f.program_id == "null"
                          ? HloIndex::kUnknownProgramId
                          : hlo_program_key(program_of(f.program_id));
    try {
      p_->hlo.add(buffer->view(), program, f.bare_module);
      p_->buffers.push_back(std::move(buffer));
    } catch (const InputError& e) {
      p_->warnings.push_back(buf_->path() + ": skipped an embedded HloProto: " + e.reason());
    }
  }

  // Stat names must be interned now: event_stats only has a const Profile.
  void intern_arg_key(std::string_view key) { cache_.intern(p_->strings, key); }

  uint32_t process_of(std::string_view pid) {
    auto it = process_index_.find(std::string(pid));
    if (it != process_index_.end()) return it->second;
    uint32_t index = static_cast<uint32_t>(processes_.size());
    processes_.push_back(Process{std::string(pid), {}});
    process_index_.emplace(std::string(pid), index);
    return index;
  }

  uint32_t thread_of(std::string_view pid, std::string_view tid) {
    if (last_thread_ != UINT32_MAX && pid == last_pid_ && tid == last_tid_) return last_thread_;
    std::string key;
    key.reserve(pid.size() + tid.size() + 1);
    key.append(pid).push_back('\0');
    key.append(tid);
    auto it = thread_index_.find(key);
    uint32_t index;
    if (it != thread_index_.end()) {
      index = it->second;
    } else {
      index = static_cast<uint32_t>(threads_.size());
      threads_.push_back(Thread{process_of(pid), std::string(tid), {}});
      thread_index_.emplace(std::move(key), index);
    }
    last_pid_.assign(pid);
    last_tid_.assign(tid);
    last_thread_ = index;
    return index;
  }

  int64_t time_of(std::string_view text, const char* what, size_t offset) {
    if (text.size() >= 2 && text.front() == '"') text = text.substr(1, text.size() - 2);
    int64_t ps = 0;
    if (!micros_text_to_ps(text, ps))
      fail(std::string("\"") + what +
               "\" is not a number of microseconds: " + std::string(text.substr(0, 40)),
           offset);
    return ps;
  }

  void commit(const Fields& f, size_t offset, size_t length) {
    // ts and dur were taken unchecked (read_event): the time parser checks the ones it converts
    // (every ts of a timed event, the dur of a complete one), and the rest are checked here.
    const bool timed =
        f.has_ts && (f.ph == 'X' || f.ph == 'B' || f.ph == 'E' || f.ph == 'i' || f.ph == 'I');
    for (auto [member, text, has, parsed] :
         {std::tuple{"ts", f.ts, f.has_ts, timed}, {"dur", f.dur, f.has_dur, timed && f.ph == 'X'}})
      if (has && !parsed && !is_json_value(text))
        fail(std::string("invalid JSON: the trace event member \"") + member +
                 "\" is not a well-formed JSON value",
             offset);
    switch (f.ph) {
      case 'X':
      case 'B':
      case 'E':
      case 'i':
      case 'I':
        break;
      case 'M':
        if (f.name == "process_name" && !f.arg_name.empty()) {
          Process& proc = processes_[process_of(f.pid)];
          proc.name = std::string(f.arg_name);
          proc.host = std::string(f.arg_host);
        }
        if (f.name == "thread_name" && !f.arg_name.empty()) {
          Thread& thread = threads_[thread_of(f.pid, f.tid)];
          thread.name = std::string(f.arg_name);
          thread.derived = f.derived;
        }
        if (f.name == "jaxprof_hlo_proto" && !f.proto.empty()) add_embedded_hlo(f);
        return;
      case 'C':
        ++counts_.counters;
        return;
      case 0:
        ++counts_.empty;  // e.g. the `{}` XLA writes after the last event
        return;
      default:
        ++counts_.other;
        return;
    }
    if (!f.has_ts) {
      ++counts_.malformed;
      return;
    }
    Record r;
    r.ts_ps = time_of(f.ts, "ts", offset);
    r.dur_ps = 0;
    if (f.ph == 'X' && f.has_dur) {
      r.dur_ps = time_of(f.dur, "dur", offset);
      if (r.dur_ps < 0) fail("event with a negative duration", offset);
      if (!duration_in_range(r.dur_ps))
        fail("out of range: \"dur\" " + std::string(f.dur) + " is longer than the " + kMaxTimeText +
                 " a profile can span",
             offset);
    }
    if (f.ph == 'B') r.dur_ps = kBegin;
    if (f.ph == 'E') r.dur_ps = kEnd;
    r.thread = thread_of(f.pid, f.tid);
    r.name = 0;
    r.display = 0;
    if (f.ph != 'E') {
      // XLA writes the metadata display name as "name" and the full name as "long_name".
      bool full = !f.long_name.empty() && f.long_name != f.name;
      r.name = cache_.intern(p_->strings, full ? f.long_name : f.name);
      if (full) r.display = cache_.intern(p_->strings, f.name);
    }
    std::string_view op = f.hlo_op;
    if (op.empty()) op = hlo_name_from_text(f.long_name);
    if (op.empty()) op = hlo_name_from_text(f.name);
    r.hlo_op = cache_.intern(p_->strings, op);
    r.module = 0;
    if (!f.hlo_module.empty() || !f.program_id.empty()) {
      ModuleKey key{cache_.intern(p_->strings, f.hlo_module),
                    f.program_id.empty() ? kNoProgram : program_of(f.program_id)};
      r.module = p_->intern_module(key);
    }
    r.device_start_ps = r.device_duration_ps = Events::kNoStat;
    if (!f.device_offset.empty() && !f.device_duration.empty()) {
      int64_t start = picoseconds_of(f.device_offset), dur = picoseconds_of(f.device_duration);
      if (start != Events::kNoStat && dur != Events::kNoStat) {
        r.device_start_ps = start;
        r.device_duration_ps = dur;
        any_device_clock_ = true;
      }
    }
    r.stats = kNoStats;
    if (f.has_args && f.ph != 'E') {
      if (length > std::numeric_limits<uint32_t>::max()) fail("event larger than 4 GiB", offset);
      r.stats = static_cast<uint32_t>(spans_.size());
      spans_.emplace_back(offset, static_cast<uint32_t>(length));
    }
    if (r.dur_ps < 0)
      paired_.push_back(r);
    else
      records_.push_back(r);
  }

  // Begin/end pairs become complete events: per thread, in time order (file order on ties), an
  // end closes the innermost open begin.
  void pair_begin_end() {
    std::stable_sort(paired_.begin(), paired_.end(), [](const Record& a, const Record& b) {
      return a.thread != b.thread ? a.thread < b.thread : a.ts_ps < b.ts_ps;
    });
    std::vector<size_t> open;
    for (size_t i = 0; i < paired_.size(); ++i) {
      if (i > 0 && paired_[i].thread != paired_[i - 1].thread) {
        counts_.unmatched += open.size();
        open.clear();
      }
      if (paired_[i].dur_ps == kBegin) {
        open.push_back(i);
      } else if (open.empty()) {
        ++counts_.unmatched;
      } else {
        Record r = paired_[open.back()];
        open.pop_back();
        if (!checked_sub(paired_[i].ts_ps, r.ts_ps, r.dur_ps) || !duration_in_range(r.dur_ps))
          fail("out of range: a begin/end (B/E) pair spans more than " + std::string(kMaxTimeText) +
                   " (begin at " + micros(r.ts_ps) + ", end at " + micros(paired_[i].ts_ps) + ")",
               -1);
        records_.push_back(r);
      }
    }
    counts_.unmatched += open.size();
    paired_.clear();
    paired_.shrink_to_fit();
  }

  void finish() {
    pair_begin_end();
    std::erase_if(records_, [&](const Record& r) { return threads_[r.thread].derived; });
    if (records_.size() >= std::numeric_limits<uint32_t>::max() - p_->events.size())
      fail("trace has more than 4 billion events; not supported", 0);

    // Planes in pid order, lines in tid order (numbers numerically, names after numbers).
    auto order_key = [](const std::string& k) {
      auto n = number_of(k);
      return std::make_tuple(n ? 0 : 1, n.value_or(0), k);
    };
    std::vector<uint32_t> process_order(processes_.size());
    std::iota(process_order.begin(), process_order.end(), 0);
    std::sort(process_order.begin(), process_order.end(), [&](uint32_t a, uint32_t b) {
      return order_key(processes_[a].key) < order_key(processes_[b].key);
    });
    std::vector<std::vector<uint32_t>> threads_of(processes_.size());
    for (uint32_t t = 0; t < threads_.size(); ++t) threads_of[threads_[t].process].push_back(t);

    std::vector<uint32_t> counts(threads_.size(), 0);
    int64_t min_ts = std::numeric_limits<int64_t>::max();
    for (const Record& r : records_) {
      ++counts[r.thread];
      min_ts = std::min(min_ts, r.ts_ps);
    }
    if (records_.empty()) min_ts = 0;
    // Time zero: the earliest event, floored to a nanosecond (Host::base_ns is in ns).
    int64_t base_ns = min_ts / 1000 - (min_ts % 1000 < 0 ? 1 : 0);
    int64_t base_ps;
    if (!checked_mul(base_ns, 1000, base_ps))
      fail("out of range: the first event's \"ts\" (" + micros(min_ts) +
               ") is too far before zero to be a time in picoseconds",
           -1);
    p_->hosts[host_index_].base_ns = base_ns;

    std::vector<uint32_t> plane_of_process(processes_.size());
    uint64_t next_event = p_->events.size();
    // Processes that name their host (jaxprof exports): the first host named is the file's,
    // the others become hosts of their own on the file's clock.
    std::map<std::string, uint32_t> host_of;
    for (uint32_t pi : process_order) {
      const std::string& host = processes_[pi].host;
      if (host.empty() || host_of.count(host)) continue;
      if (host_of.empty()) {
        p_->hosts[host_index_].name = host;
        host_of[host] = host_index_;
      } else {
        host_of[host] = static_cast<uint32_t>(p_->hosts.size());
        p_->hosts.push_back(Host{host, buf_->path(), base_ns});
      }
    }
    for (uint32_t pi : process_order) {
      const Process& proc = processes_[pi];
      uint32_t plane_index = static_cast<uint32_t>(p_->planes.size());
      plane_of_process[pi] = plane_index;
      Plane& plane = p_->planes.emplace_back();
      std::string name = proc.name.empty() ? "pid " + proc.key : proc.name;
      plane.name = p_->strings.intern_copy(name);
      plane.id = number_of(proc.key).value_or(static_cast<int64_t>(pi));
      plane.host = proc.host.empty() ? host_index_ : host_of[proc.host];
      plane.buffer = buffer_index_;
      plane.source = source_index_;
      plane.kind = classify_plane(name);
      auto& ts = threads_of[pi];
      std::sort(ts.begin(), ts.end(), [&](uint32_t a, uint32_t b) {
        return order_key(threads_[a].key) < order_key(threads_[b].key);
      });
      for (uint32_t t : ts) {
        if (threads_[t].derived) continue;
        uint32_t line_index = static_cast<uint32_t>(p_->lines.size());
        threads_[t].line = line_index;
        plane.lines.push_back(line_index);
        Line& line = p_->lines.emplace_back();
        line.plane = plane_index;
        line.source = source_index_;
        line.id = number_of(threads_[t].key).value_or(static_cast<int64_t>(t));
        std::string line_name = threads_[t].name.empty() ? threads_[t].key : threads_[t].name;
        line.name = p_->strings.intern_copy(line_name);
        line.timestamp_ns = base_ns;
        line.first_event = static_cast<uint32_t>(next_event);
        line.event_count = counts[t];
        line.decoded = counts[t] == 0;
        // As the XSpace importer: device planes' lines keep the device clock columns.
        line.device_clock = any_device_clock_ && is_device_plane(plane.kind);
        next_event += counts[t];
      }
    }

    // Scatter records into the line ranges, in file order.
    Events& ev = p_->events;
    ev.resize(next_event, /*uninitialised=*/true);
    std::vector<uint32_t> cursor(threads_.size());
    for (uint32_t t = 0; t < threads_.size(); ++t)
      if (!threads_[t].derived) cursor[t] = p_->lines[threads_[t].line].first_event;
    // One metadata entry per (plane, name, display name): events of one name may differ in how
    // they are shown (a jaxprof export names ops by their HLO op, other events of the kernel by
    // the kernel).
    struct KeyHash {
      size_t operator()(const std::pair<uint64_t, uint32_t>& k) const {
        return std::hash<uint64_t>()(k.first) * 31 + k.second;
      }
    };
    std::unordered_map<std::pair<uint64_t, uint32_t>, uint32_t, KeyHash> metadata_index;
    std::pair<uint64_t, uint32_t> last_key{UINT64_MAX, 0};
    uint32_t last_metadata = 0;
    for (const Record& r : records_) {
      uint32_t plane = plane_of_process[threads_[r.thread].process];
      std::pair<uint64_t, uint32_t> key{(static_cast<uint64_t>(plane) << 32) | r.name, r.display};
      if (key != last_key) {
        auto [it, inserted] =
            metadata_index.try_emplace(key, static_cast<uint32_t>(p_->event_metadata.size()));
        if (inserted) {
          EventMetadata& m = p_->event_metadata.emplace_back();
          m.plane = plane;
          m.id = static_cast<int64_t>(it->second);
          m.name = r.name;
          m.display_name = r.display;
        }
        last_key = key;
        last_metadata = it->second;
      }
      uint32_t e = cursor[r.thread]++;
      if (!checked_sub(r.ts_ps, base_ps, ev.start_ps[e]) || !time_in_range(ev.start_ps[e]))
        fail("out of range: an event at \"ts\" " + micros(r.ts_ps) + " lies more than " +
                 kMaxTimeText + " after the trace's first event (at " + micros(min_ts) + ")",
             -1);
      ev.duration_ps[e] = r.dur_ps;
      ev.metadata[e] = last_metadata;
      ev.raw[e] = r.stats;
      ev.hlo_op[e] = r.hlo_op;
      ev.module[e] = r.module;
      if (p_->lines[threads_[r.thread].line].device_clock) {
        ev.device_start_ps[e] = r.device_start_ps;
        ev.device_duration_ps[e] = r.device_duration_ps;
      }
    }
    records_.clear();
    records_.shrink_to_fit();
    for (const Thread& t : threads_)
      if (!t.derived) sort_line(p_->lines[t.line]);
    assign_tpu_modules();
    report();
  }

  // Lines are sorted by (start, longest first), as analyses expect.
  void sort_line(const Line& line) {
    Events& ev = p_->events;
    uint32_t b = line.first_event, n = line.event_count;
    bool sorted = true;
    for (uint32_t i = b + 1; i < b + n && sorted; ++i)
      sorted = ev.start_ps[i - 1] < ev.start_ps[i] ||
               (ev.start_ps[i - 1] == ev.start_ps[i] && ev.duration_ps[i - 1] >= ev.duration_ps[i]);
    if (sorted) return;
    std::vector<uint32_t> order(n);
    std::iota(order.begin(), order.end(), b);
    std::stable_sort(order.begin(), order.end(), [&](uint32_t x, uint32_t y) {
      if (ev.start_ps[x] != ev.start_ps[y]) return ev.start_ps[x] < ev.start_ps[y];
      return ev.duration_ps[x] > ev.duration_ps[y];
    });
    auto permute = [&](auto& column) {
      using T = typename std::decay_t<decltype(column)>::value_type;
      std::vector<T> tmp(n);
      for (uint32_t i = 0; i < n; ++i) tmp[i] = column[order[i]];
      std::copy(tmp.begin(), tmp.end(), column.begin() + b);
    };
    permute(ev.start_ps);
    permute(ev.duration_ps);
    permute(ev.metadata);
    permute(ev.raw);
    permute(ev.hlo_op);
    permute(ev.module);
    if (line.device_clock) {
      permute(ev.device_start_ps);
      permute(ev.device_duration_ps);
    }
  }

  // TPU op events name no module in the trace (the xplane has it as a program id on their
  // metadata); the enclosing event on the plane's "XLA Modules" line, named "module(program id)",
  // gives it.
  void assign_tpu_modules() {
    for (uint32_t pi = first_plane_; pi < p_->planes.size(); ++pi) {
      const Plane& plane = p_->planes[pi];
      if (plane.kind != PlaneKind::kTpu) continue;
      const Line* modules = nullptr;
      for (uint32_t li : plane.lines)
        if (p_->str(p_->lines[li].name) == "XLA Modules") modules = &p_->lines[li];
      if (modules == nullptr || modules->event_count == 0) continue;
      Events& ev = p_->events;
      std::vector<uint32_t> module_of(modules->event_count, 0);
      for (uint32_t i = 0; i < modules->event_count; ++i) {
        std::string_view name = p_->event_name(modules->first_event + i);
        size_t open = name.rfind('(');
        if (open == std::string_view::npos || !name.ends_with(')')) continue;
        ProgramId id = program_of(name.substr(open + 1, name.size() - open - 2));
        StringId module_name = p_->strings.intern_copy(name.substr(0, open));
        module_of[i] = p_->intern_module(ModuleKey{module_name, id});
      }
      for (uint32_t li : plane.lines) {
        const Line& line = p_->lines[li];
        if (&line == modules) continue;
        uint32_t m = 0;  // modules are sorted and do not overlap: one pointer suffices
        for (uint32_t e = line.first_event; e < line.first_event + line.event_count; ++e) {
          if (ev.module[e] != 0 || ev.hlo_op[e] == 0) continue;
          while (m < modules->event_count && ev.end_ps(modules->first_event + m) <= ev.start_ps[e])
            ++m;
          if (m < modules->event_count && ev.start_ps[modules->first_event + m] <= ev.start_ps[e])
            ev.module[e] = module_of[m];
        }
      }
    }
  }

  void report() {
    std::string notes;
    auto note = [&](uint64_t n, const char* what) {
      if (n == 0) return;
      if (!notes.empty()) notes += ", ";
      notes += std::to_string(n) + " " + what;
    };
    note(counts_.counters, "counter (C) events");
    note(counts_.other, "events of other phases (flow, async, sample, object)");
    note(counts_.unmatched, "unmatched begin/end (B/E) events");
    note(counts_.malformed, "events without a timestamp or not objects");
    if (!notes.empty()) p_->warnings.push_back(buf_->path() + ": ignored " + notes);
  }

  struct Counts {
    uint64_t counters = 0, other = 0, unmatched = 0, malformed = 0, empty = 0;
  };

  Profile* p_;  // only set while run() is running
  std::shared_ptr<Buffer> buf_;
  ChromeTraceOptions opt_;
  std::string_view text_;
  uint32_t host_index_ = 0, buffer_index_ = 0, source_index_ = 0;
  uint32_t first_plane_ = static_cast<uint32_t>(p_->planes.size());
  od::parser parser_;
  std::vector<char> scratch_;
  // The event member (or arg) read_event is reading, for messages; empty outside it (a view into
  // the parser's strings, which the next window's parse frees).
  std::string_view member_;
  bool bad_unread_ = false;          // the error is not_json's
  const char* bad_value_ = nullptr;  // where the value not_json refused starts, in scratch_
  std::vector<Record> records_, paired_;
  std::vector<std::pair<size_t, uint32_t>> spans_;  // per event with args: its bytes in the file
  bool any_device_clock_ = false;  // some event carried device_offset_ps and device_duration_ps
  std::vector<Process> processes_;
  std::vector<Thread> threads_;
  std::unordered_map<std::string, uint32_t> process_index_, thread_index_;
  std::string last_pid_, last_tid_;
  uint32_t last_thread_ = UINT32_MAX;
  InternCache cache_;
  Counts counts_;
  mutable std::mutex kept_mutex_;
  mutable std::deque<std::string> kept_;
};

}  // namespace

void import_chrome_trace(Profile& profile, std::shared_ptr<Buffer> buffer, const std::string& host,
                         const ChromeTraceOptions& options) {
  std::string path = buffer->path();
  bool compressed = buffer->compressed();
  size_t size = buffer->size();
  try {
    auto importer =
        std::make_unique<ChromeTraceImporter>(profile, std::move(buffer), host, options);
    importer->run();
    profile.sources.push_back(std::move(importer));
  } catch (const CutShort& e) {
    throw truncated_input(path, e.reason(), e.offset(), size, compressed);
  } catch (const InputError& e) {
    if (!e.file().empty()) throw;
    std::string reason = e.reason();
    if (compressed && e.offset() >= 0) reason += " (offset in the decompressed data)";
    throw InputError(path, reason, e.offset());
  }
}

}  // namespace jaxprof
