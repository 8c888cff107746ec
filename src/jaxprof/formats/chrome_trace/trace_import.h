// What the stages of the Chrome trace import share, as in Perfetto's trace_processor: the
// tokenizer (trace_tokenizer.h, with event_fields.h) reads the file's bytes into each event's
// members, the parser (trace_parser.h) turns one event's members into a record, and the tracker
// (trace_tracker.h) keeps what spans records (processes, threads, begin/end pairs) and makes the
// planes and lines. Here: the forms one event takes between them, and the errors they throw.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <utility>

#include "jaxprof/common/error.h"
#include "jaxprof/model/string_table.h"

namespace jaxprof::chrome_trace {

// Record::stats of an event without args.
constexpr uint32_t kNoStats = std::numeric_limits<uint32_t>::max();
// Markers in Record::dur_ps for begin/end events until they are paired.
constexpr int64_t kBegin = -1, kEnd = -2;

inline bool is_ws(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

inline std::string_view trim(std::string_view s) {
  while (!s.empty() && is_ws(s.back())) s.remove_suffix(1);
  return s;
}

// An error at a byte offset of the JSON; import_chrome_trace names the file.
[[noreturn]] inline void fail(const std::string& reason, int64_t offset) {
  throw InputError("", reason, offset);
}

// The document stops inside a value: the file was cut short (import_chrome_trace words it).
class CutShort : public InputError {
 public:
  CutShort(const std::string& what, int64_t offset) : InputError("", what, offset) {}
};

[[noreturn]] inline void cut_short(const std::string& what, int64_t offset) {
  throw CutShort(what, offset);
}

// The fields of one trace event that the import needs; views live as long as the window.
struct Fields {
  char ph = 0;
  bool has_ts = false, has_dur = false;
  std::string_view pid, tid, ts, dur, name;
  std::string_view hlo_op, hlo_module, long_name, program_id, arg_name;
  std::string_view device_offset, device_duration;  // raw JSON tokens
  // Members of jaxprof's own exports (render/perfetto/perfetto.h): a process's host, a derived
  // track, an embedded HloProto.
  std::string_view arg_host, proto;
  bool derived = false, bare_module = false;
  bool has_args = false;
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
  uint32_t stats;  // index into the import's stats spans, or kNoStats
  // The device's own clock (TPU ops' device_offset_ps / device_duration_ps args), or kNoStat.
  int64_t device_start_ps, device_duration_ps;
};

// Where an event with args lies in the file (offset, length): its stats are read from there when
// asked for.
using StatsSpan = std::pair<size_t, uint32_t>;

}  // namespace jaxprof::chrome_trace
