// The compile result from partials: each host's compile records (compile_records.cc) on one
// clock, cut to the options, and their totals per module, per phase and per pass.
#include "jaxprof/analysis/compile/compile.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <unordered_map>

#include "jaxprof/analysis/compile/compile_records.h"
#include "jaxprof/analysis/partial/extract_partials.h"

namespace jaxprof {
namespace {

using compile_detail::empty_phases;
using compile_detail::sort_steps;

// The passes alone: XLA's NVTX "XlaPass:NAME" ranges as NAME (their pipelines, scheduling and
// buffer assignment left out), else the steps of the HLO-passes phase.
void keep_passes(std::vector<CompileStepTime>& steps) {
  constexpr std::string_view kPass = "XlaPass:";
  std::vector<CompileStepTime> kept;
  for (CompileStepTime& s : steps) {
    if (s.name.starts_with(kPass)) {
      s.name.erase(0, kPass.size());
      kept.push_back(std::move(s));
    } else if (!s.name.starts_with("Xla") && s.phase == CompilePhase::kHloPasses) {
      kept.push_back(std::move(s));
    }
  }
  steps = std::move(kept);
}

}  // namespace

CompileResult compile_from_partials(const PartialSet& set, const CompileOptions& options) {
  if (options.totals_only)
    set.require_any(kPartCompileTotals | kPartCompile, "compile");
  else
    set.require(kPartCompile, "compile");
  CompileResult result;
  result.phases = empty_phases();
  result.passes_only = options.passes_only;
  bool saw_stage = false, totals_only = false;
  uint64_t unattributed = 0;
  set.for_each_host(
      [&](uint32_t hi, const HostPartial& h) {
        const PartialCompile& c = h.compile;
        saw_stage |= c.saw_stage;
        totals_only |= c.totals_only || options.totals_only;
        unattributed += c.unattributed;
        for (CompileRecord rec : c.records) {
          rec.start_ps += set.shift_ps(hi);
          if (options.totals_only) {
            rec.phases = empty_phases();
            std::vector<CompileStepTime>().swap(rec.steps);
            rec.events = 0;
            rec.worker_threads = 0;
            rec.worker_busy_ps = 0;
          }
          if (options.passes_only) {
            keep_passes(rec.steps);
            sort_steps(rec.steps);
          }
          if (options.top_steps > 0 && rec.steps.size() > options.top_steps) {
            rec.steps.resize(options.top_steps);
            rec.steps.shrink_to_fit();  // thousands of hosts' compiles each keep only these
          }
          result.compiles.push_back(std::move(rec));
        }
      },
      kPartCompile | kPartCompileTotals);
  std::stable_sort(
      result.compiles.begin(), result.compiles.end(),
      [](const CompileRecord& a, const CompileRecord& b) { return a.start_ps < b.start_ps; });

  std::map<std::pair<std::string, ProgramId>, size_t> module_index;
  for (const CompileRecord& c : result.compiles) {
    result.wall_ps += c.wall_ps;
    result.worker_busy_ps += c.worker_busy_ps;
    auto [it, added] = module_index.try_emplace({c.module, c.program_id}, result.modules.size());
    if (added) {
      ModuleCompile& m = result.modules.emplace_back();
      m.module = c.module;
      m.program_id = c.program_id;
      m.phases = empty_phases();
    }
    ModuleCompile& m = result.modules[it->second];
    ++m.compiles;
    m.wall_ps += c.wall_ps;
    m.worker_busy_ps += c.worker_busy_ps;
    for (int i = 0; i < kCompilePhaseCount; ++i) {
      m.phases[i].wall_ps += c.phases[i].wall_ps;
      m.phases[i].thread_ps += c.phases[i].thread_ps;
      result.phases[i].wall_ps += c.phases[i].wall_ps;
      result.phases[i].thread_ps += c.phases[i].thread_ps;
    }
  }
  if (options.passes_only) {
    std::unordered_map<std::string, size_t> pass_index;
    for (const CompileRecord& c : result.compiles)
      for (const CompileStepTime& st : c.steps) {
        auto [it, added] = pass_index.try_emplace(st.name, result.passes.size());
        if (added) {
          result.passes.push_back(st);
          continue;
        }
        CompileStepTime& agg = result.passes[it->second];
        agg.count += st.count;
        agg.wall_ps += st.wall_ps;
        agg.thread_ps += st.thread_ps;
      }
    std::sort(result.passes.begin(), result.passes.end(),
              [](const CompileStepTime& a, const CompileStepTime& b) {
                if (a.wall_ps != b.wall_ps) return a.wall_ps > b.wall_ps;
                return a.name < b.name;
              });
  }
  std::stable_sort(result.modules.begin(), result.modules.end(),
                   [](const ModuleCompile& a, const ModuleCompile& b) {
                     if (a.wall_ps != b.wall_ps) return a.wall_ps > b.wall_ps;
                     return a.module < b.module;
                   });

  if (result.compiles.empty()) {
    result.notes.push_back(
        "no compile events: programs were compiled before the capture began, loaded from the "
        "compilation cache, or this backend records none on host threads");
  } else if (!saw_stage) {
    result.notes.push_back(
        "no JAX stage events (trace_to_jaxpr_dynamic, lower_sharding_computation, "
        "backend_compile): compiles are XLA's compile entry points alone; tracing and lowering "
        "are not visible");
  }
  if (unattributed > 0 && !totals_only)
    result.notes.push_back(fmt::format(
        "{} compile events lie outside every compile window (a compile cut by the capture's "
        "start, or one with no launching event) and are not counted",
        unattributed));
  return result;
}

CompileResult compute_compile(const Profile& p, const CompileOptions& options) {
  PartialExtractOptions extract;
  extract.parts = options.totals_only ? kPartCompileTotals : kPartCompile;
  return compile_from_partials(PartialSet(extract_partials(p, extract)), options);
}

}  // namespace jaxprof
