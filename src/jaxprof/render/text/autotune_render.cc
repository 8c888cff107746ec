#include "jaxprof/render/text/autotune_render.h"

#include <fmt/format.h>

#include "jaxprof/common/units.h"

namespace jaxprof {

namespace {

std::string json_ns_list(const std::vector<int64_t>& ps) {
  std::string out = "[";
  for (size_t i = 0; i < ps.size(); ++i) out += (i ? ", " : "") + ps_to_ns_exact(ps[i]);
  return out + "]";
}

std::string json(const AutotuneReport& r) {
  std::string out = fmt::format(
      "{{\"pattern\": {}, \"source\": {}, \"bootstrap\": {{\"resamples\": {}, \"seed\": {}}}, "
      "\"candidates\": [",
      json_string(r.pattern), json_string(r.source), r.resamples, r.seed);
  for (size_t i = 0; i < r.candidates.size(); ++i) {
    const CandidateTiming& c = r.candidates[i];
    std::string names = "[";
    for (size_t k = 0; k < c.names.size(); ++k) names += (k ? ", " : "") + json_string(c.names[k]);
    names += "]";
    out += fmt::format(
        "{}{{\"id\": {}, \"names\": {}, \"runs\": {}, \"median_ns\": {}, \"mean_ns\": {}, "
        "\"mad_ns\": {}, \"ci95_ns\": [{}, {}], \"samples_ns\": {}, \"span_samples_ns\": {}, "
        "\"warmup_samples_ns\": {}}}",
        i ? ", " : "", json_string(c.id), names, c.samples_ps.size(), ps_to_ns(c.median_ps),
        ps_to_ns(c.mean_ps), ps_to_ns(c.mad_ps), ps_to_ns(c.ci_low_ps), ps_to_ns(c.ci_high_ps),
        json_ns_list(c.samples_ps), json_ns_list(c.span_samples_ps),
        json_ns_list(c.warmup_samples_ps));
  }
  auto id_or_null = [&](int i) {
    return i < 0 ? std::string("null") : json_string(r.candidates[size_t(i)].id);
  };
  out += fmt::format(
      "], \"winner\": {}, \"runner_up\": {}, \"speedup\": {}, \"ci_disjoint\": {}, "
      "\"p_value\": {}, \"significant\": {}, \"warnings\": {}}}\n",
      id_or_null(r.winner), id_or_null(r.runner_up), number(r.speedup), r.ci_disjoint,
      number(r.p_value), r.significant, json_string_array(r.warnings));
  return out;
}

std::string csv(const AutotuneReport& r) {
  std::string out =
      "rank,id,names,runs,median_ns,mean_ns,mad_ns,ci95_low_ns,ci95_high_ns,warmup_runs,"
      "samples_ns\n";
  for (size_t i = 0; i < r.candidates.size(); ++i) {
    const CandidateTiming& c = r.candidates[i];
    std::string names, samples;
    for (size_t k = 0; k < c.names.size(); ++k) {
      if (k) names += ';';
      names += c.names[k];
    }
    for (size_t k = 0; k < c.samples_ps.size(); ++k) {
      if (k) samples += ';';
      samples += ps_to_ns_exact(c.samples_ps[k]);
    }
    out += fmt::format("{},{},{},{},{},{},{},{},{},{},{}\n", i + 1, csv_field(c.id),
                       csv_field(names), c.samples_ps.size(), ps_to_ns(c.median_ps),
                       ps_to_ns(c.mean_ps), ps_to_ns(c.mad_ps), ps_to_ns(c.ci_low_ps),
                       ps_to_ns(c.ci_high_ps), c.warmup_samples_ps.size(), csv_field(samples));
  }
  return out;
}

std::string table(const AutotuneReport& r) {
  if (r.candidates.empty())
    return fmt::format("no candidate matches '{}' (try `jaxprof modules` or `jaxprof ops`)\n",
                       r.pattern);
  Table t({{"rank", Measure::kCount},
           {"id"},
           {"name"},
           {"runs", Measure::kCount},
           {"median", Measure::kDuration},
           {"mean", Measure::kDuration},
           {"MAD", Measure::kDuration},
           {"95% CI of median", Measure::kLabel},
           {"vs best", Measure::kLabel},
           {"warm-up", Measure::kCount}});
  for (size_t i = 0; i < r.candidates.size(); ++i) {
    const CandidateTiming& c = r.candidates[i];
    bool none = c.samples_ps.empty();
    std::string vs = none || r.winner < 0
                         ? std::string(kUnknownText)
                         : fmt::format("{:.2f}x", c.median_ps / r.candidates[0].median_ps);
    t.add({i + 1, c.id, c.names.empty() ? "" : c.names[0], c.samples_ps.size(),
           none ? Cell::unknown() : Cell(c.median_ps), none ? Cell::unknown() : Cell(c.mean_ps),
           none ? Cell::unknown() : Cell(c.mad_ps),
           none ? std::string(kUnknownText)
                : human_duration(c.ci_low_ps) + " - " + human_duration(c.ci_high_ps),
           vs, c.warmup_samples_ps.size()});
  }
  std::string out = t.render(40) + "\n";
  if (r.winner < 0) return out + "no winner: no candidate has steady-state samples\n";
  const CandidateTiming& w = r.candidates[size_t(r.winner)];
  out += fmt::format("winner: {} (median {})", w.id, human_duration(w.median_ps));
  if (r.runner_up < 0)
    out += ", the only candidate with samples\n";
  else
    out += fmt::format(
        ", {:.2f}x faster than {}: {} (95% CIs {}, one-sided Mann-Whitney p = {:.3g})\n", r.speedup,
        r.candidates[size_t(r.runner_up)].id, r.significant ? "significant" : "NOT significant",
        r.ci_disjoint ? "disjoint" : "overlap", r.p_value);
  out += fmt::format("samples from {}; bootstrap: {} resamples, seed {:#x}\n", r.source,
                     r.resamples, r.seed);
  return out;
}

}  // namespace

std::string render_autotune_report(const AutotuneReport& report, OutputFormat format) {
  switch (format) {
    case OutputFormat::kJson:
      return json(report);
    case OutputFormat::kCsv:
      return csv(report);
    default:
      return table(report);
  }
}

}  // namespace jaxprof
