// Autotuning (docs/autotune.md): the report of a profile's candidates or of samples gathered in
// Python, the labels that name candidates in HLO text, and the SQLite cache of results.
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "_core.h"
#include "jaxprof/analysis/autotune/autotune_report.h"
#include "jaxprof/autotune/cache.h"
#include "jaxprof/autotune/labels.h"
#include "jaxprof/render/text/autotune_render.h"

namespace jaxprof::python {

using namespace nb::literals;

namespace {

// `jaxprof autotune-report --format json` of this profile.
std::string autotune_report_json(PyProfile& self, const std::string& pattern, bool include_warmup,
                                 size_t resamples, uint64_t seed) {
  AutotuneReportOptions o{pattern, include_warmup, resamples, seed};
  nb::gil_scoped_release release;
  std::lock_guard lock(self.mu);
  return render_autotune_report(autotune_report(self.profile(), o), OutputFormat::kJson);
}

// The same report for samples gathered in Python (merged from several profiles, or wall-clock):
// one (id, samples_ps, span_samples_ps) per candidate. Statistics stay in C++.
std::string rank_candidates_json(
    const std::vector<std::tuple<std::string, std::vector<int64_t>, std::vector<int64_t>>>& cands,
    const std::string& pattern, const std::string& source, size_t resamples, uint64_t seed) {
  std::vector<CandidateTiming> timings;
  for (const auto& [id, samples, spans] : cands) {
    CandidateTiming c;
    c.id = id;
    c.samples_ps = samples;
    c.span_samples_ps = spans;
    timings.push_back(std::move(c));
  }
  AutotuneReportOptions o;
  o.pattern = pattern;
  o.resamples = resamples;
  o.seed = seed;
  nb::gil_scoped_release release;
  return render_autotune_report(rank_candidates(std::move(timings), o, source),
                                OutputFormat::kJson);
}

std::vector<std::tuple<std::string, std::string, int64_t, std::string, uint64_t>> labels(
    nb::bytes text, const std::string& prefix) {
  std::vector<AutotuneLabel> found;
  {
    std::string_view view(text.c_str(), text.size());
    nb::gil_scoped_release release;
    found = extract_labels(view, prefix);
  }
  std::vector<std::tuple<std::string, std::string, int64_t, std::string, uint64_t>> out;
  for (auto& l : found) out.emplace_back(l.label, l.op, l.version, l.call_key, l.occurrences);
  return out;
}

// The SQLite cache; entries cross as the export JSON (docs/autotune.md). One connection per
// object, used by one thread at a time: its transactions are statement sequences.
struct PyCache {
  std::unique_ptr<AutotuneCache> cache;
  std::mutex mu;

  explicit PyCache(const std::string& path) {
    std::string p = path.empty() ? AutotuneCache::default_path() : path;
    nb::gil_scoped_release release;
    cache = std::make_unique<AutotuneCache>(p);
  }
  size_t put_json(const std::string& json) {
    nb::gil_scoped_release release;
    std::vector<CacheEntry> entries = cache_from_json(json, cache->path());
    std::lock_guard lock(mu);
    cache->put(entries);
    return entries.size();
  }
  std::optional<std::string> get_json(const std::string& device, const std::string& op,
                                      const std::string& call_key) {
    nb::gil_scoped_release release;
    std::lock_guard lock(mu);
    std::optional<CacheEntry> e = cache->get({device, op, call_key});
    if (!e) return std::nullopt;
    return cache_to_json({*e});
  }
  std::string list_json(const std::string& device, const std::string& op) {
    nb::gil_scoped_release release;
    std::lock_guard lock(mu);
    return cache_to_json(cache->list(device, op));
  }
  size_t clear(const std::string& device, const std::string& op) {
    nb::gil_scoped_release release;
    std::lock_guard lock(mu);
    return cache->clear(device, op);
  }
};

}  // namespace

void bind_autotune(nb::module_& m) {
  profile_class().def("autotune_report_json", &autotune_report_json, "pattern"_a,
                      "include_warmup"_a, "resamples"_a, "seed"_a);

  nb::class_<PyCache>(m, "AutotuneCache")
      .def(nb::init<const std::string&>(), "path"_a)
      .def_prop_ro("path", [](const PyCache& c) { return c.cache->path(); })
      .def("put_json", &PyCache::put_json, "json"_a)
      .def("get_json", &PyCache::get_json, "device"_a, "op"_a, "call_key"_a)
      .def("list_json", &PyCache::list_json, "device"_a, "op"_a)
      .def("clear", &PyCache::clear, "device"_a, "op"_a);

  m.attr("AUTOTUNE_BOOTSTRAP_SEED") = kAutotuneBootstrapSeed;
  m.attr("DEFAULT_LABEL_PREFIX") = std::string(kDefaultLabelPrefix);
  m.def("default_cache_path", &AutotuneCache::default_path);
  m.def("rank_candidates_json", &rank_candidates_json, "candidates"_a, "pattern"_a, "source"_a,
        "resamples"_a, "seed"_a);
  m.def("extract_labels", &labels, "text"_a, "prefix"_a);
}

}  // namespace jaxprof::python
