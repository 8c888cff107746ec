#include "jaxprof/formats/chrome_trace/chrome_trace.h"

#include <simdjson.h>

#include <algorithm>
#include <cstring>
#include <deque>
#include <mutex>
#include <vector>

#include "jaxprof/common/error.h"
#include "jaxprof/formats/chrome_trace/intern_cache.h"
#include "jaxprof/formats/chrome_trace/trace_import.h"
#include "jaxprof/formats/chrome_trace/trace_parser.h"
#include "jaxprof/formats/chrome_trace/trace_tokenizer.h"
#include "jaxprof/formats/chrome_trace/trace_tracker.h"
#include "jaxprof/model/time_range.h"

namespace jaxprof {

namespace {

namespace od = simdjson::ondemand;
using chrome_trace::InternCache;
using chrome_trace::kNoStats;
using chrome_trace::StatsSpan;
using chrome_trace::TraceParser;
using chrome_trace::TraceTokenizer;
using chrome_trace::TraceTracker;
using chrome_trace::trim;

// Reads the file through its stages (tokenizer, parser, tracker), then stays with the profile:
// events are in place, and their stats are read from the file when asked for.
class ChromeTraceImporter : public EventSource {
 public:
  ChromeTraceImporter(Profile& p, std::shared_ptr<Buffer> buf, const std::string& host,
                      const ChromeTraceOptions& opt)
      : buf_(std::move(buf)), opt_(opt), text_(buf_->view()), slots_(p.add_file(host, buf_)) {}

  void run(Profile& p) {
    TraceTracker tracker(p, buf_->path(), slots_);
    // Reserving for the densest plausible trace costs address space, not memory: untouched
    // pages are never faulted in, and growth never copies.
    tracker.reserve(text_.size() / 64 + 16);
    spans_.reserve(text_.size() / 64 + 16);
    InternCache cache;
    TraceParser parser(p, tracker, cache, spans_);
    TraceTokenizer(*buf_, opt_, p.strings, cache, parser).run();
    if (opt_.release_pages) buf_->release(0, buf_->size());
    tracker.finish();
  }

  void decode_lines(Profile& profile, const std::vector<uint32_t>& lines) override {
    // Events are in place; only the shift to the profile's common time zero is left.
    int64_t shift_ps = 0;  // within range: finish_import checked it
    if (!ps_since(profile.hosts[slots_.host].base_ns, profile.base_ns, shift_ps))
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

  std::shared_ptr<Buffer> buf_;
  ChromeTraceOptions opt_;
  std::string_view text_;
  Profile::FileSlots slots_;
  std::vector<StatsSpan> spans_;  // per event with args: its bytes in the file
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
    importer->run(profile);
    profile.sources.push_back(std::move(importer));
  } catch (const chrome_trace::CutShort& e) {
    throw truncated_input(path, e.reason(), e.offset(), size, compressed);
  } catch (const InputError& e) {
    if (!e.file().empty()) throw;
    std::string reason = e.reason();
    if (compressed && e.offset() >= 0) reason += " (offset in the decompressed data)";
    throw InputError(path, reason, e.offset());
  }
}

}  // namespace jaxprof
