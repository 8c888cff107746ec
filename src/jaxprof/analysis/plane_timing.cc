#include "jaxprof/analysis/plane_timing.h"

#include <re2/re2.h>

#include <algorithm>
#include <string_view>
#include <unordered_map>

#include "jaxprof/analysis/intervals.h"
#include "jaxprof/error.h"

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

struct KeyStats {
  std::optional<StatValue> hlo_module, program_id, run_id, scope_range_id;
  void take(const Profile& profile, const std::vector<Stat>& stats, bool overwrite) {
    for (const Stat& s : stats) {
      std::string_view n = profile.str(s.name);
      std::optional<StatValue>* slot = nullptr;
      if (n == "hlo_module")
        slot = &hlo_module;
      else if (n == "program_id")
        slot = &program_id;
      else if (n == "run_id")
        slot = &run_id;
      else if (n == "scope_range_id")
        slot = &scope_range_id;
      if (slot && (overwrite || !*slot)) *slot = s.value;
    }
  }
};

}  // namespace

std::string event_timing_key(const Profile& profile, uint32_t plane, uint32_t e) {
  KeyStats ks;
  ks.take(profile, profile.event_stats(plane, e), true);
  if (!ks.hlo_module || !ks.program_id)
    ks.take(profile, profile.metadata_stats(profile.events.metadata[e]), false);
  std::string key;
  if (ks.hlo_module && ks.hlo_module->is_text())
    key.assign(ks.hlo_module->str);
  else
    key.assign(profile.event_name(e));
  key += '(';
  append_value(key, ks.program_id ? ks.program_id : ks.run_id);
  key += '-';
  append_value(key, ks.scope_range_id);
  key += ')';
  return key;
}

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
  const Events& ev = profile.events;

  // Candidates: events long enough, up to the cap, in line order. Keys are interned.
  struct Candidate {
    int64_t start, end;
    uint32_t key;
  };
  std::vector<Candidate> cands;
  std::vector<std::string> keys;
  std::unordered_map<std::string, uint32_t> key_index;
  bool capped = false;
  for (uint32_t li : p.lines) {
    const Line& line = profile.lines[li];
    for (uint32_t e = line.first_event; e < line.first_event + line.event_count; ++e) {
      if (ev.duration_ps[e] < options.min_duration_ps) continue;
      if (options.max_events && cands.size() >= options.max_events) {
        capped = true;
        break;
      }
      auto [it, fresh] =
          key_index.try_emplace(event_timing_key(profile, plane, e), uint32_t(keys.size()));
      if (fresh) keys.push_back(it->first);
      cands.push_back({ev.start_ps[e], ev.end_ps(e), it->second});
    }
    if (capped) break;
  }
  std::stable_sort(cands.begin(), cands.end(),
                   [](const Candidate& a, const Candidate& b) { return a.start < b.start; });

  // Prefix and regex are evaluated once per key, not per event.
  std::vector<char> is_parent(keys.size()), is_child(keys.size());
  for (size_t k = 0; k < keys.size(); ++k) {
    is_parent[k] = std::string_view(keys[k]).starts_with(options.prefix);
    is_child[k] = re && RE2::PartialMatch(keys[k], *re);
  }

  std::vector<std::vector<Interval>> intervals(keys.size());
  std::vector<uint64_t> occurrences(keys.size());
  std::vector<int64_t> first_start(keys.size(), INT64_MAX);
  for (size_t i = 0; i < cands.size(); ++i) {
    const Candidate& c = cands[i];
    if (!is_parent[c.key]) continue;
    ++occurrences[c.key];
    first_start[c.key] = std::min(first_start[c.key], c.start);
    auto& out = intervals[c.key];
    if (!re) {
      out.push_back({c.start, c.end});
      continue;
    }
    // Children: later-or-equal starts (the sort is by start) fully inside [start, end], on any
    // line of the plane, with a different key.
    size_t j = i;
    while (j > 0 && cands[j - 1].start == c.start) --j;
    for (; j < cands.size() && cands[j].start <= c.end; ++j) {
      const Candidate& ch = cands[j];
      if (j == i || ch.key == c.key || !is_child[ch.key] || ch.end > c.end) continue;
      out.push_back({ch.start, ch.end});
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
