#include "jaxprof/analysis/autotune/autotune_report.h"

#include <re2/re2.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <numeric>
#include <set>

#include "jaxprof/analysis/ops/device_events.h"
#include "jaxprof/analysis/timeline/intervals.h"
#include "jaxprof/analysis/steps/module_executions.h"
#include "jaxprof/analysis/stats/significance.h"
#include "jaxprof/common/error.h"

namespace jaxprof {

namespace {

struct Collector {
  std::map<std::string, CandidateTiming> by_id;
  std::map<std::string, std::set<std::string>> names;

  CandidateTiming& at(const std::string& id, std::string_view name) {
    names[id].emplace(name);
    CandidateTiming& c = by_id[id];
    c.id = id;
    return c;
  }
};

// FNV-1a: a hash that is the same under every standard library, so reports are reproducible.
uint64_t fnv1a(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char ch : s) h = (h ^ ch) * 0x100000001b3ULL;
  return h;
}

bool candidate_id(const RE2& re, std::string_view name, std::string& id) {
  return RE2::PartialMatch(name, re, &id);
}

// Module executions: a sample is the union of the execution's op intervals (device busy time,
// gaps between ops excluded), the span is kept beside it.
void from_executions(const Profile& profile, const RE2& re, bool include_warmup, Collector& out) {
  const Events& ev = profile.events;
  for (const DeviceExecutions& dev : module_executions(profile)) {
    for (const ModuleExecution& x : dev.executions) {
      std::string id;
      if (!candidate_id(re, x.name, id)) continue;
      std::vector<Interval> iv;
      iv.reserve(x.events.size());
      for (uint32_t e : x.events) iv.push_back({ev.start_ps[e], ev.end_ps(e)});
      int64_t busy = x.events.empty() ? x.duration_ps() : union_length(iv);
      CandidateTiming& c = out.at(id, x.name);
      if (x.warmup && !include_warmup) {
        c.warmup_samples_ps.push_back(busy);
      } else {
        c.samples_ps.push_back(busy);
        c.span_samples_ps.push_back(x.duration_ps());
      }
    }
  }
}

// Device events named by the pattern (GPU kernels, custom calls, named scopes): the outermost
// matching event is a sample; when matching events nest inside it, its time is their union, as
// plane_timing counts a parent by its matching children.
void from_events(const Profile& profile, const RE2& re, Collector& out) {
  const Events& ev = profile.events;
  for (const DeviceLines& dev : op_devices(profile)) {
    profile.require_lines(dev.lines);
    struct Match {
      int64_t start, end;
      std::string id;
      std::string_view name;
    };
    std::vector<Match> matches;
    for (uint32_t li : dev.lines) {
      const Line& line = profile.lines[li];
      for (uint32_t e = line.first_event; e < line.first_event + line.event_count; ++e) {
        if (!dev.counts(ev, e)) continue;
        std::string_view name = profile.event_display_name(e);
        std::string id;
        if (candidate_id(re, name, id)) matches.push_back({ev.start_ps[e], ev.end_ps(e), id, name});
      }
    }
    std::stable_sort(matches.begin(), matches.end(), [](const Match& a, const Match& b) {
      return a.start != b.start ? a.start < b.start : a.end > b.end;
    });
    for (size_t i = 0; i < matches.size();) {
      const Match& parent = matches[i];
      std::vector<Interval> children;
      size_t j = i + 1;
      for (; j < matches.size() && matches[j].start < parent.end; ++j)
        if (matches[j].end <= parent.end) children.push_back({matches[j].start, matches[j].end});
      int64_t t = children.empty() ? parent.end - parent.start : union_length(children);
      CandidateTiming& c = out.at(parent.id, parent.name);
      c.samples_ps.push_back(t);
      c.span_samples_ps.push_back(parent.end - parent.start);
      i = j;
    }
  }
}

double quantile_sorted(const std::vector<double>& v, double q) {
  double pos = q * static_cast<double>(v.size() - 1);
  size_t i = static_cast<size_t>(pos);
  double f = pos - static_cast<double>(i);
  return i + 1 < v.size() ? v[i] + f * (v[i + 1] - v[i]) : v[i];
}

}  // namespace

void summarise_candidate(CandidateTiming& c, size_t resamples, uint64_t seed) {
  if (c.samples_ps.empty()) return;
  std::vector<double> x(c.samples_ps.begin(), c.samples_ps.end());
  c.median_ps = median(x);
  c.mean_ps = std::accumulate(x.begin(), x.end(), 0.0) / static_cast<double>(x.size());
  std::vector<double> dev;
  for (double v : x) dev.push_back(std::abs(v - c.median_ps));
  c.mad_ps = median(std::move(dev));
  c.ci_low_ps = c.ci_high_ps = c.median_ps;
  if (x.size() < 2 || resamples == 0) return;
  // Percentile bootstrap; the seed mixes in the id so candidates do not share resampling noise.
  SplitMix64 rng(seed ^ fnv1a(c.id));
  std::vector<double> meds, r(x.size());
  meds.reserve(resamples);
  for (size_t k = 0; k < resamples; ++k) {
    for (double& v : r) v = x[rng.below(x.size())];
    meds.push_back(median(r));
  }
  std::sort(meds.begin(), meds.end());
  c.ci_low_ps = quantile_sorted(meds, 0.025);
  c.ci_high_ps = quantile_sorted(meds, 0.975);
}

AutotuneReport autotune_report(const Profile& profile, const AutotuneReportOptions& options) {
  RE2 given(options.pattern, RE2::Quiet);
  if (!given.ok())
    throw InputError("", "invalid --pattern '" + options.pattern + "': " + given.error());
  // Without a group the whole match names the candidate.
  std::string grouped = options.pattern;
  if (!given.NumberOfCapturingGroups()) grouped.insert(0, 1, '(').push_back(')');
  RE2 re(grouped, RE2::Quiet);
  Collector col;
  std::string source;
  from_executions(profile, re, options.include_warmup, col);
  if (!col.by_id.empty()) {
    source = "module executions";
  } else {
    from_events(profile, re, col);
    if (!col.by_id.empty()) source = "events";
  }
  std::vector<CandidateTiming> candidates;
  for (auto& [id, c] : col.by_id) {
    c.names.assign(col.names[id].begin(), col.names[id].end());
    candidates.push_back(std::move(c));
  }
  return rank_candidates(std::move(candidates), options, std::move(source));
}

AutotuneReport rank_candidates(std::vector<CandidateTiming> candidates,
                               const AutotuneReportOptions& options, std::string source) {
  AutotuneReport r;
  r.pattern = options.pattern;
  r.source = std::move(source);
  r.seed = options.seed;
  r.resamples = options.resamples;
  for (CandidateTiming& c : candidates) {
    summarise_candidate(c, options.resamples, options.seed);
    if (c.samples_ps.empty())
      r.warnings.push_back("candidate " + c.id +
                           " has no steady-state samples (only warm-up runs)");
    r.candidates.push_back(std::move(c));
  }
  std::stable_sort(r.candidates.begin(), r.candidates.end(),
                   [](const CandidateTiming& a, const CandidateTiming& b) {
                     if (a.samples_ps.empty() != b.samples_ps.empty()) return b.samples_ps.empty();
                     return a.median_ps < b.median_ps;
                   });
  if (r.candidates.empty()) {
    r.warnings.push_back("no module or device event matches '" + options.pattern + "'");
    return r;
  }
  if (!r.candidates[0].samples_ps.empty()) r.winner = 0;
  if (r.candidates.size() > 1 && !r.candidates[1].samples_ps.empty()) r.runner_up = 1;
  if (r.winner < 0 || r.runner_up < 0) return r;
  const CandidateTiming& w = r.candidates[0];
  const CandidateTiming& u = r.candidates[1];
  r.speedup = w.median_ps > 0 ? u.median_ps / w.median_ps : 0;
  r.ci_disjoint = w.samples_ps.size() > 1 && u.samples_ps.size() > 1 && w.ci_high_ps < u.ci_low_ps;
  std::vector<double> a(u.samples_ps.begin(), u.samples_ps.end());
  std::vector<double> b(w.samples_ps.begin(), w.samples_ps.end());
  r.p_value = mann_whitney(a, b).p_less;
  r.significant = r.ci_disjoint || r.p_value < 0.05;
  return r;
}

}  // namespace jaxprof
