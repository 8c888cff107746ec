#include "jaxprof/analysis/ops/plane_timing.h"

#include <re2/re2.h>

#include <algorithm>
#include <array>
#include <bit>
#include <functional>
#include <memory>
#include <string_view>
#include <unordered_map>

#include "jaxprof/analysis/timeline/intervals.h"
#include "jaxprof/common/parallel_parts.h"
#include "jaxprof/common/error.h"
#include "jaxprof/model/metadata_stat_cache.h"

namespace jaxprof {

namespace {

// Python's f-string rendering of the stat value ejkernel formats into its keys.
void append_value(std::string& out, const std::optional<StatValue>& v) {
  if (!v) {
    out += "None";
    return;
  }
  switch (v->kind) {
    case StatKind::kInt64:
      out += std::to_string(v->i);
      return;
    case StatKind::kUint64:
      out += std::to_string(v->u);
      return;
    case StatKind::kString:
    case StatKind::kRef:
    case StatKind::kBytes:
      out += v->str;
      return;
    default:
      out += v->to_string();
  }
}

// The four stats a key is made of, looked up by interned name (cheap per event: the source reads
// only these from the event's bytes).
enum Slot { kHloModule, kProgramId, kRunId, kScopeRangeId, kSlots };
using KeyStats = std::array<std::optional<StatValue>, kSlots>;

// Reads the four key stats of events: the event's own, then, only when hlo_module or program_id is
// missing, its metadata's for the gaps (ejkernel reads the event's stats; some producers put these
// two on the metadata). Metadata stats are decoded once per metadata entry.
class KeyStatReader {
 public:
  explicit KeyStatReader(const Profile& profile)
      : profile_(profile),
        metadata_(profile,
                  {profile.strings.find("hlo_module"), profile.strings.find("program_id"),
                   profile.strings.find("run_id"), profile.strings.find("scope_range_id")}) {}

  // Returns whether the event has any of the four stats itself (else its key depends on its
  // metadata entry alone).
  bool read(uint32_t plane, uint32_t e, KeyStats& out) {
    if (!own_ || plane != plane_) {
      own_ = profile_.stat_reader(plane, metadata_.names());
      plane_ = plane;
    }
    own_->read(ScannedEvent{.metadata = profile_.events.metadata[e], .event = e}, out);
    bool own = false;
    for (const auto& o : out) own |= o.has_value();
    if (!out[kHloModule] || !out[kProgramId])
      metadata_.fill_gaps(profile_.events.metadata[e], out.data());
    return own;
  }

 private:
  const Profile& profile_;
  MetadataStatCache<kSlots> metadata_;
  std::unique_ptr<StatReader> own_;  // the events' own stats, for events of plane_
  uint32_t plane_ = 0;
};

void append_key(std::string& key, const Profile& profile, uint32_t e, const KeyStats& ks) {
  if (ks[kHloModule] && ks[kHloModule]->is_text())
    key.assign(ks[kHloModule]->str);
  else
    key.assign(profile.event_name(e));
  key += '(';
  append_value(key, ks[kProgramId] ? ks[kProgramId] : ks[kRunId]);
  key += '-';
  append_value(key, ks[kScopeRangeId]);
  key += ')';
}

struct TextHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

// Interns event keys by their parts (name text, program or run id, scope range id) and builds a
// key's text only the first time its parts are seen: a plane has millions of events and few keys.
// Different parts that print the same (an int64 and a uint64 5) still share one key.
class KeyInterner {
 public:
  explicit KeyInterner(const Profile& profile)
      : profile_(profile), name_text_(profile.event_metadata.size(), kUnset) {}

  // The key of an event whose four stats all come from its metadata entry: one per entry.
  uint32_t intern_by_metadata(uint32_t e, const KeyStats& ks) {
    if (by_metadata_.empty()) by_metadata_.assign(profile_.event_metadata.size(), kUnset);
    uint32_t& k = by_metadata_[profile_.events.metadata[e]];
    if (k == kUnset) k = intern(e, ks);
    return k;
  }

  uint32_t intern(uint32_t e, const KeyStats& ks) {
    Parts parts;
    if (ks[kHloModule] && ks[kHloModule]->is_text()) {
      parts.text = text_id(ks[kHloModule]->str);
    } else {
      uint32_t& t = name_text_[profile_.events.metadata[e]];
      if (t == kUnset) t = text_id(profile_.event_name(e));
      parts.text = t;
    }
    parts.program = part(ks[kProgramId] ? ks[kProgramId] : ks[kRunId]);
    parts.scope = part(ks[kScopeRangeId]);
    auto [it, fresh] = by_parts_.try_emplace(parts, 0);
    if (fresh) {
      append_key(text_, profile_, e, ks);
      auto k = by_text_.find(std::string_view(text_));
      if (k == by_text_.end()) {
        k = by_text_.emplace(text_, uint32_t(keys.size())).first;
        keys.push_back(text_);
      }
      it->second = k->second;
    }
    return it->second;
  }

  std::vector<std::string> keys;

 private:
  static constexpr uint32_t kUnset = UINT32_MAX;
  struct Part {
    StatKind kind = StatKind::kNone;
    uint64_t bits = 0;  // the number's bits, or a text id
    bool operator==(const Part&) const = default;
  };
  struct Parts {
    uint32_t text = 0;
    Part program, scope;
    bool operator==(const Parts&) const = default;
  };
  struct PartsHash {
    size_t operator()(const Parts& p) const {
      uint64_t h = p.text;
      for (const Part& q : {p.program, p.scope})
        h = (h ^ (uint64_t(q.kind) << 56) ^ q.bits) * 0x9e3779b97f4a7c15ULL;
      return size_t(h ^ (h >> 29));
    }
  };

  uint32_t text_id(std::string_view s) {
    return texts_.try_emplace(s, uint32_t(texts_.size())).first->second;
  }
  Part part(const std::optional<StatValue>& v) {
    if (!v) return {};
    if (v->is_text()) return {StatKind::kString, text_id(v->str)};
    switch (v->kind) {
      case StatKind::kDouble:
        return {v->kind, std::bit_cast<uint64_t>(v->d)};
      case StatKind::kInt64:
        return {v->kind, static_cast<uint64_t>(v->i)};
      default:
        return {v->kind, v->u};
    }
  }

  const Profile& profile_;
  std::vector<uint32_t> name_text_;    // by event metadata id
  std::vector<uint32_t> by_metadata_;  // key by event metadata id, for events without own stats
  std::unordered_map<std::string_view, uint32_t> texts_;  // views into the profile's bytes
  std::unordered_map<Parts, uint32_t, PartsHash> by_parts_;
  std::unordered_map<std::string, uint32_t, TextHash, std::equal_to<>> by_text_;
  std::string text_;
};

}  // namespace

std::string event_timing_key(const Profile& profile, uint32_t plane, uint32_t e) {
  KeyStats ks;
  KeyStatReader(profile).read(plane, e, ks);
  std::string key;
  append_key(key, profile, e, ks);
  return key;
}

namespace {

struct Candidate {
  int64_t start, end;
  uint32_t key;
};

// A run of consecutive events of one line.
struct EventRange {
  uint32_t first, last;  // [first, last) in the event columns
  bool device_clock = false;  // the line's events may carry the device clock (op_clock.h)
};

// An event's length: on the device clock where it carries one (a TPU op), else the timeline's.
int64_t event_length(const Events& ev, const EventRange& r, uint32_t e) {
  return r.device_clock && ev.device_duration_ps[e] != Events::kNoStat ? ev.device_duration_ps[e]
                                                                         : ev.duration_ps[e];
}

// What one thread found in its share of the plane's events: keys in the order it met them.
struct Partial {
  std::vector<std::string> keys;
  std::vector<char> is_parent;
  std::vector<std::vector<Interval>> intervals;  // of its parents' events (no regex)
  std::vector<uint64_t> occurrences;
  std::vector<int64_t> first_start;
  std::vector<Candidate> cands;  // every event, for the regex
};

void read_events(const Profile& profile, uint32_t plane, const std::vector<EventRange>& ranges,
                 const PlaneTimingOptions& options, bool keep_candidates, Partial& out) {
  const Events& ev = profile.events;
  KeyInterner interner(profile);
  KeyStatReader reader(profile);
  KeyStats ks;
  for (const EventRange& r : ranges) {
    for (uint32_t e = r.first; e < r.last; ++e) {
      // Placed where the timeline puts it, for the length its own clock measured.
      const int64_t start = ev.start_ps[e], end = start + event_length(ev, r, e);
      if (end - start < options.min_duration_ps) continue;
      uint32_t k =
          reader.read(plane, e, ks) ? interner.intern(e, ks) : interner.intern_by_metadata(e, ks);
      for (size_t n = out.is_parent.size(); n < interner.keys.size(); ++n) {
        out.is_parent.push_back(std::string_view(interner.keys[n]).starts_with(options.prefix));
        out.intervals.emplace_back();
        out.occurrences.push_back(0);
        out.first_start.push_back(INT64_MAX);
      }
      if (keep_candidates) {
        out.cands.push_back({start, end, k});
      } else if (out.is_parent[k]) {
        ++out.occurrences[k];
        out.first_start[k] = std::min(out.first_start[k], start);
        out.intervals[k].push_back({start, end});
      }
    }
  }
  out.keys = std::move(interner.keys);
}

// The plane's events in line order, cut where the cap on events long enough is reached.
std::vector<EventRange> plane_ranges(const Profile& profile, const Plane& plane,
                                     const PlaneTimingOptions& options) {
  std::vector<EventRange> ranges;
  uint64_t taken = 0;
  for (uint32_t li : plane.lines) {
    const Line& line = profile.lines[li];
    EventRange r{line.first_event, line.first_event + line.event_count, line.device_clock};
    if (options.max_events) {
      for (uint32_t e = r.first; e < r.last; ++e) {
        if (event_length(profile.events, r, e) < options.min_duration_ps) continue;
        if (taken == options.max_events) {
          r.last = e;
          break;
        }
        ++taken;
      }
    }
    if (r.last > r.first) ranges.push_back(r);
    if (options.max_events && taken == options.max_events) break;
  }
  return ranges;
}

// Splits the ranges into `parts` runs of about equal event counts, keeping their order.
std::vector<std::vector<EventRange>> split_ranges(const std::vector<EventRange>& ranges,
                                                  size_t parts) {
  uint64_t total = 0;
  for (const EventRange& r : ranges) total += r.last - r.first;
  std::vector<std::vector<EventRange>> out(1);
  uint64_t done = 0;
  for (EventRange r : ranges) {
    while (r.first < r.last) {
      uint64_t quota = total * out.size() / parts;  // where the current part ends
      uint64_t room = quota > done ? quota - done : 0;
      uint32_t n = static_cast<uint32_t>(std::min<uint64_t>(room, r.last - r.first));
      if (n == 0 && out.size() < parts) {
        out.emplace_back();
        continue;
      }
      if (n == 0) n = r.last - r.first;  // the last part takes the rest
      out.back().push_back({r.first, r.first + n});
      r.first += n;
      done += n;
    }
  }
  return out;
}

// Below this many events a plane is read on the calling thread.
constexpr uint64_t kEventsPerThread = 200000;

}  // namespace

std::vector<TimedKey> plane_timed_events(const Profile& profile, uint32_t plane,
                                         const PlaneTimingOptions& options) {
  if (plane >= profile.planes.size())
    throw InputError("", "plane index " + std::to_string(plane) + " out of range (0-" +
                             std::to_string(static_cast<int64_t>(profile.planes.size()) - 1) + ")");
  std::unique_ptr<RE2> re;
  if (!options.regex.empty()) {
    re = std::make_unique<RE2>(options.regex, RE2::Quiet);
    if (!re->ok()) throw InputError("", "invalid regex '" + options.regex + "': " + re->error());
  }
  const Plane& p = profile.planes[plane];
  profile.require_lines(p.lines);

  // Read the events in parallel runs; each thread interns its own keys (reading an event's stats
  // is most of the cost), then the runs are merged in order, so keys keep their first-seen order.
  std::vector<EventRange> ranges = plane_ranges(profile, p, options);
  uint64_t events = 0;
  for (const EventRange& r : ranges) events += r.last - r.first;
  size_t threads = options.threads ? options.threads : parts_for(events, kEventsPerThread);
  std::vector<std::vector<EventRange>> parts = split_ranges(ranges, threads);
  std::vector<Partial> partials(parts.size());
  {
    Profile::ReadOnlyScope reading(profile);
    run_parts(parts.size(), [&](size_t t) {
      read_events(profile, plane, parts[t], options, re != nullptr, partials[t]);
    });
  }

  // Merge: global key ids in first-seen order.
  std::vector<std::string> keys;
  std::unordered_map<std::string, uint32_t, TextHash, std::equal_to<>> key_index;
  std::vector<char> is_parent;
  std::vector<std::vector<Interval>> intervals;
  std::vector<uint64_t> occurrences;
  std::vector<int64_t> first_start;
  std::vector<Candidate> cands;
  for (Partial& part : partials) {
    std::vector<uint32_t> global(part.keys.size());
    for (size_t k = 0; k < part.keys.size(); ++k) {
      auto [it, fresh] = key_index.try_emplace(part.keys[k], uint32_t(keys.size()));
      if (fresh) {
        keys.push_back(part.keys[k]);
        is_parent.push_back(part.is_parent[k]);
        intervals.emplace_back();
        occurrences.push_back(0);
        first_start.push_back(INT64_MAX);
      }
      uint32_t g = global[k] = it->second;
      occurrences[g] += part.occurrences[k];
      first_start[g] = std::min(first_start[g], part.first_start[k]);
      if (intervals[g].empty())
        intervals[g] = std::move(part.intervals[k]);
      else
        intervals[g].insert(intervals[g].end(), part.intervals[k].begin(), part.intervals[k].end());
    }
    for (const Candidate& c : part.cands) cands.push_back({c.start, c.end, global[c.key]});
  }

  if (re) {
    std::vector<char> is_child(keys.size());
    for (size_t k = 0; k < keys.size(); ++k) is_child[k] = RE2::PartialMatch(keys[k], *re);
    std::stable_sort(cands.begin(), cands.end(),
                     [](const Candidate& a, const Candidate& b) { return a.start < b.start; });
    for (size_t i = 0; i < cands.size(); ++i) {
      const Candidate& c = cands[i];
      if (!is_parent[c.key]) continue;
      ++occurrences[c.key];
      first_start[c.key] = std::min(first_start[c.key], c.start);
      // Children: later-or-equal starts (the sort is by start) fully inside [start, end], on any
      // line of the plane, with a different key.
      auto& out = intervals[c.key];
      size_t j = i;
      while (j > 0 && cands[j - 1].start == c.start) --j;
      for (; j < cands.size() && cands[j].start <= c.end; ++j) {
        const Candidate& ch = cands[j];
        if (j == i || ch.key == c.key || !is_child[ch.key] || ch.end > c.end) continue;
        out.push_back({ch.start, ch.end});
      }
    }
  }

  std::vector<uint32_t> order;
  for (uint32_t k = 0; k < keys.size(); ++k)
    if (occurrences[k]) order.push_back(k);
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return first_start[a] < first_start[b]; });
  std::vector<TimedKey> result;
  result.reserve(order.size());
  for (uint32_t k : order) result.push_back({keys[k], union_length(intervals[k]), occurrences[k]});
  return result;
}

}  // namespace jaxprof
