// Every analysis and renderer on a decoded profile: the input is read as the command line reads a
// file (an nsys-jax archive, a Chrome trace or an XSpace, by its first bytes; gzip unwrapped),
// then summary, info, ops (every grouping), timeline, modules, steps, collectives, compile,
// kernels, flame (every kind and format), the HTML report, the Perfetto export, a diff of the
// profile against itself and the autotune report run on it, in every output format.
//
// Slower than the decoder targets by design: it looks for what a valid-looking profile breaks
// downstream (an index past an end, an overflow, a division by zero).
#include <string_view>

#include "fuzz_common.h"
#include "jaxprof/analysis/autotune/autotune_report.h"
#include "jaxprof/analysis/collectives/collectives.h"
#include "jaxprof/analysis/compile/compile.h"
#include "jaxprof/analysis/stats/diff.h"
#include "jaxprof/analysis/flame/flame.h"
#include "jaxprof/analysis/summary/info.h"
#include "jaxprof/analysis/ops/kernels.h"
#include "jaxprof/analysis/steps/modules.h"
#include "jaxprof/analysis/ops/ops.h"
#include "jaxprof/common/parallel_parts.h"
#include "jaxprof/analysis/ops/plane_timing.h"
#include "jaxprof/analysis/steps/step_samples.h"
#include "jaxprof/analysis/steps/steps.h"
#include "jaxprof/analysis/summary/summary.h"
#include "jaxprof/analysis/timeline/timeline.h"
#include "jaxprof/analysis/timeline/timeline_segments.h"
#include "jaxprof/formats/chrome_trace/chrome_trace.h"
#include "jaxprof/formats/nsys_jax/nsys_jax.h"
#include "jaxprof/io/zip.h"
#include "jaxprof/render/text/autotune_render.h"
#include "jaxprof/render/text/collectives_render.h"
#include "jaxprof/render/text/compile_render.h"
#include "jaxprof/render/text/diff_render.h"
#include "jaxprof/render/flame/flame_folded.h"
#include "jaxprof/render/flame/flame_speedscope.h"
#include "jaxprof/render/flame/flame_svg.h"
#include "jaxprof/render/flame/flame_text.h"
#include "jaxprof/render/html/html_diff.h"
#include "jaxprof/render/html/html_report.h"
#include "jaxprof/render/text/info_render.h"
#include "jaxprof/render/text/kernels_render.h"
#include "jaxprof/render/text/modules_render.h"
#include "jaxprof/render/text/ops_render.h"
#include "jaxprof/render/perfetto/perfetto.h"
#include "jaxprof/render/text/summary_render.h"
#include "jaxprof/render/text/timeline_render.h"

using namespace jaxprof;

namespace {

constexpr OutputFormat kFormats[] = {OutputFormat::kTable, OutputFormat::kJson, OutputFormat::kCsv};

// The profile the command line would load from these bytes; throws InputError.
void load(const uint8_t* data, size_t size, Profile& p) {
  auto buffer = fuzz::buffer_of(data, size, "fuzz.input");
  if (has_gzip_magic(buffer->view()))
    buffer = Buffer::from_bytes(gunzip(buffer->view(), "fuzz.input", size_t{1} << 24, true),
                                "fuzz.input");
  std::string_view v = buffer->view();
  size_t first = v.find_first_not_of(" \t\r\n");
  ImportOptions options = fuzz::one_thread();
  if (has_zip_magic(v)) {
    import_nsys_jax(p, buffer, "", options);
  } else if (first != std::string_view::npos && (v[first] == '{' || v[first] == '[')) {
    ChromeTraceOptions trace;
    trace.release_pages = false;
    import_chrome_trace(p, buffer, "fuzz", trace);
  } else {
    import_xspace(p, buffer, "fuzz", options);
    index_hlo_from_metadata(p);
  }
  finish_import(p);
}

// Runs `step`; an InputError (an analysis refusing what it was given) ends only that step.
template <typename Step>
void run(Step&& step) {
  try {
    step();
  } catch (const InputError& e) {
    fuzz::named(e);
  }
}

void analyse(const Profile& p) {
  run([&] {
    SummaryResult r = compute_summary(p);
    for (OutputFormat f : kFormats) (void)render_summary(r, f);
  });
  run([&] {
    ProfileInfo r = compute_info(p);
    for (OutputFormat f : kFormats) (void)render_info(r, f, true);
  });
  for (GroupBy g : {GroupBy::kHloOp, GroupBy::kKernel, GroupBy::kModule, GroupBy::kName,
                    GroupBy::kCategory, GroupBy::kOpcode}) {
    run([&] {
      OpsOptions o;
      o.group_by = g;
      OpsResult r = compute_ops(p, o);
      for (OutputFormat f : kFormats) (void)render_ops(r, f);
    });
  }
  run([&] {
    TimelineResult r = compute_timeline(p);
    for (OutputFormat f : kFormats) (void)render_timeline(r, f);
    (void)timeline_segments(p);
  });
  run([&] {
    ModulesResult r = compute_modules(p);
    for (OutputFormat f : kFormats) (void)render_modules(r, f);
    (void)compute_steps(p);
    (void)collect_step_samples(p);
  });
  run([&] {
    CollectivesOptions o;
    o.instances = true;
    CollectivesResult r = compute_collectives(p, o);
    for (OutputFormat f : kFormats) (void)render_collectives(r, f);
  });
  run([&] {
    CompileResult r = compute_compile(p);
    for (OutputFormat f : kFormats) (void)render_compile(r, f);
  });
  run([&] {
    KernelsResult r = compute_kernels(p, {});
    for (OutputFormat f : kFormats) (void)render_kernels(r, f);
  });
  for (FlameBy by : {FlameBy::kSource, FlameBy::kOpName, FlameBy::kModule}) {
    run([&] {
      FlameOptions o;
      o.by = by;
      FlameTree t = compute_flame(p, o);
      (void)render_flame_folded(t);
      (void)render_flame_speedscope(t);
      (void)render_flame_svg(t);
      for (OutputFormat f : kFormats) (void)render_flame(t, f, 20);
    });
  }
  run([&] { (void)render_html_report(p); });
  run([&] { (void)write_perfetto(p, [](std::string_view) {}); });
  run([&] {
    ProfileSamples s = collect_samples(p);
    DiffResult r = compute_diff(s, s);
    for (OutputFormat f : kFormats) (void)render_diff(r, f);
    (void)render_html_diff(r);
  });
  run([&] {
    AutotuneReportOptions o;
    o.pattern = "(fusion|dot|jit)";
    o.resamples = 20;
    AutotuneReport r = autotune_report(p, o);
    for (OutputFormat f : kFormats) (void)render_autotune_report(r, f);
  });
  run([&] {
    PlaneTimingOptions o;
    o.threads = 1;
    for (uint32_t plane = 0; plane < p.planes.size(); ++plane)
      (void)plane_timed_events(p, plane, o);
  });
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // One thread: a finding then replays the same way, and the fuzzer's own process stays small.
  analysis_threads.store(AnalysisThreads{1, false});
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  Profile p;
  try {
    load(data, size, p);
  } catch (const InputError& e) {
    fuzz::named(e);
    return 0;
  }
  analyse(p);
  return 0;
}
