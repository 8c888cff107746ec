#include "jaxprof/formats/chrome_trace/trace_parser.h"

#include <algorithm>
#include <charconv>
#include <limits>
#include <string>
#include <tuple>

#include "jaxprof/formats/chrome_trace/chrome_trace.h"
#include "jaxprof/formats/chrome_trace/json_value_check.h"
#include "jaxprof/model/time_range.h"

namespace jaxprof {

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

namespace chrome_trace {

namespace {

// The HLO instruction name from "%fusion.3 = f32[...] fusion(...)" (TPU long names).
std::string_view hlo_name_from_text(std::string_view name) {
  if (!name.starts_with('%')) return {};
  size_t eq = name.find(" = ");
  if (eq == std::string_view::npos) return {};
  return name.substr(1, eq - 1);
}

// A non-negative picosecond count written as a JSON number or string ("194437036250").
int64_t picoseconds_of(std::string_view text) {
  if (text.size() >= 2 && text.front() == '"') text = text.substr(1, text.size() - 2);
  int64_t v = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  return ec == std::errc() && p == text.data() + text.size() && v >= 0 ? v : Events::kNoStat;
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

}  // namespace

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

void TraceParser::event(const Fields& f, size_t offset, size_t length) {
  // ts and dur were taken unchecked (EventFieldReader): the time parser checks the ones it
  // converts (every ts of a timed event, the dur of a complete one), and the rest are checked here.
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
      tracker_->metadata(f);
      return;
    case 'C':
      // jaxprof's own exports mark their counter tracks derived: nothing to read back.
      if (!tracker_->derived_thread(f.pid, f.tid)) ++tracker_->ignored.counters;
      return;
    case 0:
      ++tracker_->ignored.empty;  // e.g. the `{}` XLA writes after the last event
      return;
    case 's':
    case 'f':
      // jaxprof's own exports draw collectives' arrival arrows and the critical path with
      // these: nothing to read back.
      if (f.name == "jaxprof collective arrival" || f.name == "jaxprof critical path") return;
      ++tracker_->ignored.other;
      return;
    default:
      ++tracker_->ignored.other;
      return;
  }
  if (!f.has_ts) {
    ++tracker_->ignored.malformed;
    return;
  }
  tracker_->add(record_of(f, offset, length));
}

// A timed event (complete, begin, end or instant) with its "ts".
Record TraceParser::record_of(const Fields& f, size_t offset, size_t length) {
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
  r.thread = tracker_->thread_of(f.pid, f.tid);
  r.name = 0;
  r.display = 0;
  if (f.ph != 'E') {
    // XLA writes the metadata display name as "name" and the full name as "long_name".
    bool full = !f.long_name.empty() && f.long_name != f.name;
    r.name = cache_->intern(p_->strings, full ? f.long_name : f.name);
    if (full) r.display = cache_->intern(p_->strings, f.name);
  }
  std::string_view op = f.hlo_op;
  if (op.empty()) op = hlo_name_from_text(f.long_name);
  if (op.empty()) op = hlo_name_from_text(f.name);
  r.hlo_op = cache_->intern(p_->strings, op);
  r.module = 0;
  if (!f.hlo_module.empty() || !f.program_id.empty()) {
    ModuleKey key{cache_->intern(p_->strings, f.hlo_module),
                  f.program_id.empty() ? kNoProgram : program_of(f.program_id)};
    r.module = p_->intern_module(key);
  }
  r.device_start_ps = r.device_duration_ps = Events::kNoStat;
  if (!f.device_offset.empty() && !f.device_duration.empty()) {
    int64_t start = picoseconds_of(f.device_offset), dur = picoseconds_of(f.device_duration);
    if (start != Events::kNoStat && dur != Events::kNoStat) {
      r.device_start_ps = start;
      r.device_duration_ps = dur;
      tracker_->saw_device_clock();
    }
  }
  r.stats = kNoStats;
  if (f.has_args && f.ph != 'E') {
    if (length > std::numeric_limits<uint32_t>::max()) fail("event larger than 4 GiB", offset);
    r.stats = static_cast<uint32_t>(spans_->size());
    spans_->emplace_back(offset, static_cast<uint32_t>(length));
  }
  return r;
}

}  // namespace chrome_trace

}  // namespace jaxprof
