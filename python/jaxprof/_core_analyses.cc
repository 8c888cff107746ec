// The analyses of a Profile, rendered by the CLI's own code: JSON for Python to parse (or a
// table, as the CLI prints it), and SVG charts; a flame tree is computed once and rendered on
// demand.
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "_core.h"
#include "jaxprof/analysis/collectives/collectives.h"
#include "jaxprof/analysis/compile/compile.h"
#include "jaxprof/analysis/cost/roofline.h"
#include "jaxprof/analysis/critical_path/critical_path.h"
#include "jaxprof/analysis/flame/flame.h"
#include "jaxprof/analysis/memory/memory.h"
#include "jaxprof/analysis/ops/event_filter.h"
#include "jaxprof/analysis/ops/kernels.h"
#include "jaxprof/analysis/ops/ops.h"
#include "jaxprof/analysis/ops/plane_timing.h"
#include "jaxprof/analysis/steps/modules.h"
#include "jaxprof/analysis/summary/info.h"
#include "jaxprof/analysis/summary/summary.h"
#include "jaxprof/analysis/timeline/timeline.h"
#include "jaxprof/common/error.h"
#include "jaxprof/render/flame/flame_folded.h"
#include "jaxprof/render/flame/flame_speedscope.h"
#include "jaxprof/render/flame/flame_svg.h"
#include "jaxprof/render/flame/flame_text.h"
#include "jaxprof/render/html/memory_chart.h"
#include "jaxprof/render/html/roofline_svg.h"
#include "jaxprof/render/perfetto/perfetto.h"
#include "jaxprof/render/text/collectives_render.h"
#include "jaxprof/render/text/compile_render.h"
#include "jaxprof/render/text/info_render.h"
#include "jaxprof/render/text/kernels_render.h"
#include "jaxprof/render/text/memory_render.h"
#include "jaxprof/render/text/modules_render.h"
#include "jaxprof/render/text/ops_render.h"
#include "jaxprof/render/text/roofline_render.h"
#include "jaxprof/render/text/steady_state_render.h"
#include "jaxprof/render/text/summary_render.h"
#include "jaxprof/render/text/timeline_render.h"

namespace jaxprof::python {

using namespace nb::literals;

namespace {

// "json" (what Python parses) or "table" (what a result prints, as the CLI does).
OutputFormat py_format(const std::string& format) {
  OutputFormat f = OutputFormat::kJson;
  if (!parse_output_format(format, f) || f == OutputFormat::kCsv)
    throw InputError("", "format='" + format + "': expected 'json' or 'table'");
  return f;
}

// Filters named as the Python caller writes them.
EventFilterSpec py_filter(const std::string& device = "", const std::string& prefix = "",
                          const std::string& match = "", int64_t min_duration_ps = 0) {
  EventFilterSpec f;
  f.device = device;
  f.prefix = prefix;
  f.match = match;
  f.min_duration_ps = min_duration_ps;
  f.names = {.match = "match=", .device = "device=", .min_duration = "min_duration_ns="};
  return f;
}

std::string ops_json(PyProfile& self, const std::string& group_by, const std::string& device,
                     const std::string& prefix, const std::string& match, int64_t min_duration_ps,
                     uint64_t max_events, size_t top, const std::string& format, bool by_program) {
  OpsOptions o;
  o.filter = py_filter(device, prefix, match, min_duration_ps);
  o.by_program = by_program;
  if (!parse_group_by(group_by, o.group_by))
    throw InputError("", "group_by='" + group_by +
                             "': expected one of 'hlo-op', 'kernel', 'module', 'name', "
                             "'category', 'opcode'");
  OutputFormat f = py_format(format);
  o.filter.max_events = max_events;
  o.top = top;
  o.steady = self.steady;
  nb::gil_scoped_release release;
  EventFilter check(o.filter);  // a bad regex fails before any work
  std::lock_guard lock(self.mu);
  return render_ops(compute_ops(self.profile(), o), f);
}

std::string info_json(PyProfile& self, const std::string& format) {
  OutputFormat f = py_format(format);
  nb::gil_scoped_release release;
  std::lock_guard lock(self.mu);
  return render_info(compute_info(self.profile()), f, f == OutputFormat::kJson);
}

std::string timeline_json(PyProfile& self, const std::string& format) {
  OutputFormat f = py_format(format);
  nb::gil_scoped_release release;
  std::lock_guard lock(self.mu);
  return render_timeline(compute_timeline(self.profile(), self.steady), f);
}

std::string modules_json(PyProfile& self, size_t top_ops, const std::string& format) {
  OutputFormat f = py_format(format);
  nb::gil_scoped_release release;
  std::lock_guard lock(self.mu);
  ModulesOptions o;
  o.top_ops = top_ops;
  o.steady = self.steady;
  return render_modules(compute_modules(self.profile(), o), f);
}

std::string kernels_json(PyProfile& self, const std::string& device, const std::string& prefix,
                         const std::string& match, int64_t min_duration_ps, size_t top,
                         const std::string& format) {
  OutputFormat f = py_format(format);
  KernelsOptions o;
  o.filter = py_filter(device, prefix, match, min_duration_ps);
  o.top = top;
  nb::gil_scoped_release release;
  EventFilter check(o.filter);
  std::lock_guard lock(self.mu);
  return render_kernels(compute_kernels(self.profile(), o), f);
}

// `jaxprof roofline --format json`, its table (each device's `shown` longest ops) and each
// device's chart.
std::tuple<std::string, std::string, std::vector<std::string>> roofline(
    PyProfile& self, const std::string& device, const std::string& prefix, const std::string& match,
    int64_t min_duration_ps, size_t top, const std::vector<std::string>& peak_tflops,
    double peak_gbps, const std::string& device_model, int64_t latency_floor_ps, size_t shown) {
  RooflineOptions o;
  o.filter.device = device;
  o.filter.prefix = prefix;
  o.filter.match = match;
  o.filter.min_duration_ps = min_duration_ps;
  o.top = top;
  o.latency_floor_ps = latency_floor_ps;
  for (const std::string& p : peak_tflops)
    if (!parse_peak_flops(p, o.peaks))
      throw InputError("", "peak_tflops '" + p +
                               "': expected N or TYPE=N with TYPE one of vector, fp64, fp32, "
                               "tf32, bf16, fp16, fp8, int8 and N > 0 (TFLOP/s)");
  o.peaks.bytes_per_s = peak_gbps * 1e9;
  o.peaks.model = device_model;
  o.steady = self.steady;
  nb::gil_scoped_release release;
  EventFilter check(o.filter);
  std::lock_guard lock(self.mu);
  RooflineResult r = compute_roofline(self.profile(), o);
  std::vector<std::string> svgs;
  for (const RooflineDevice& d : r.devices) svgs.push_back(roofline_svg(d));
  return {render_roofline(r, OutputFormat::kJson), render_roofline(r, OutputFormat::kTable, shown),
          std::move(svgs)};
}

// A computed flame tree: rendered on demand (JSON, SVG, folded stacks, speedscope), so that the
// tree is computed once however many renderings are asked for.
struct PyFlame {
  FlameTree tree;

  std::string json() const {
    nb::gil_scoped_release release;
    return render_flame(tree, OutputFormat::kJson, 0);
  }
  std::string table(size_t top) const {
    nb::gil_scoped_release release;
    return render_flame(tree, OutputFormat::kTable, top);
  }
  std::string svg(const std::string& title, int width, double min_fraction) const {
    FlameSvgOptions o;
    o.title = title;
    o.width = width;
    o.min_fraction = min_fraction;
    nb::gil_scoped_release release;
    return render_flame_svg(tree, o);
  }
  std::string folded() const {
    nb::gil_scoped_release release;
    return render_flame_folded(tree);
  }
  std::string speedscope() const {
    nb::gil_scoped_release release;
    return render_flame_speedscope(tree);
  }
};

std::unique_ptr<PyFlame> flame(PyProfile& self, const std::string& by, const std::string& device,
                               bool idle) {
  FlameOptions o;
  if (!parse_flame_by(by, o.by))
    throw InputError("", "by='" + by + "': expected one of 'source', 'op-name', 'module'");
  o.device = device;
  o.idle = idle;
  o.steady = self.steady;
  auto out = std::make_unique<PyFlame>();
  nb::gil_scoped_release release;
  std::lock_guard lock(self.mu);
  out->tree = compute_flame(self.profile(), o);
  return out;
}

std::string collectives_json(PyProfile& self, const std::string& device, size_t top, bool instances,
                             const std::string& format) {
  OutputFormat f = py_format(format);
  CollectivesOptions o;
  o.filter = py_filter(device);
  o.top = top;
  o.instances = instances;
  o.steady = self.steady;
  nb::gil_scoped_release release;
  EventFilter check(o.filter);
  std::lock_guard lock(self.mu);
  return render_collectives(compute_collectives(self.profile(), o), f);
}

// `jaxprof memory --format json` and one SVG chart per allocator.
std::tuple<std::string, std::vector<std::string>> memory(PyProfile& self, const std::string& only,
                                                         const std::string& allocator,
                                                         const std::string& module, size_t top,
                                                         size_t points) {
  if (!only.empty() && only != "allocators" && only != "programs")
    throw InputError("", "unknown memory part '" + only + "' (allocators, programs)");
  MemoryOptions o;
  o.want_timeline = only != "programs";
  o.want_programs = only != "allocators";
  o.timeline.allocator = allocator;
  o.timeline.top = top;
  o.timeline.max_points = points;
  o.programs.module = module;
  o.programs.top = top;
  nb::gil_scoped_release release;
  std::lock_guard lock(self.mu);
  MemoryResult r = compute_memory(self.profile(), o);
  return {render_memory(r, OutputFormat::kJson), svg_memory_timelines(r.timeline)};
}

// `top`: what the table lists (render_compile); JSON is always complete.
std::string compile_json(PyProfile& self, size_t top_steps, const std::string& format, size_t top) {
  OutputFormat f = py_format(format);
  CompileOptions o;
  o.top_steps = top_steps;
  nb::gil_scoped_release release;
  std::lock_guard lock(self.mu);
  return render_compile(compute_compile(self.profile(), o), f, top);
}

std::string summary_render(PyProfile& self, size_t top, size_t observations, bool text) {
  SummaryOptions o;
  o.top = top;
  o.observations = observations;
  o.steady = self.steady;
  nb::gil_scoped_release release;
  std::lock_guard lock(self.mu);
  return render_summary(compute_summary(self.profile(), o),
                        text ? OutputFormat::kTable : OutputFormat::kJson);
}

// What the steady-state figures leave out (the CLI's "set_apart" JSON member, compiles included).
std::string set_apart_json(PyProfile& self) {
  nb::gil_scoped_release release;
  std::lock_guard lock(self.mu);
  const Profile& p = self.profile();
  return render_set_apart_json(
      summarize_set_apart(steady_state(p, self.steady), &steady_state_time(p, self.steady)));
}

// The Perfetto/Chrome trace of `jaxprof export --perfetto` (the same code), written to `path`.
nb::dict export_perfetto(PyProfile& self, const std::string& path, bool align, bool critical_path) {
  PerfettoSummary s;
  {
    nb::gil_scoped_release release;
    std::lock_guard lock(self.mu);
    PerfettoOptions options;
    if (align) options.host_clocks = host_clocks(self.profile());
    std::optional<CriticalPathResult> steps_path;
    if (critical_path) {
      steps_path = compute_critical_path(self.profile(), {.rank = false});
      options.critical_path = &*steps_path;
    }
    s = write_perfetto_file(self.profile(), path, TraceFormat::kAuto, options);
  }
  nb::dict d;
  d["devices"] = s.devices;
  d["op_events"] = s.op_events;
  d["segments"] = s.segments;
  d["executions"] = s.executions;
  d["collective_events"] = s.collective_events;
  d["arrival_flows"] = s.arrival_flows;
  d["path_segments"] = s.path_segments;
  d["notes"] = s.notes;
  return d;
}

std::vector<std::tuple<std::string, int64_t, uint64_t>> plane_timing(
    PyProfile& self, uint32_t plane, const std::string& prefix, const std::string& regex,
    int64_t min_duration_ps, uint64_t max_events, uint32_t threads) {
  PlaneTimingOptions o{prefix, regex, min_duration_ps, max_events, threads};
  std::vector<TimedKey> keys;
  {
    nb::gil_scoped_release release;
    std::lock_guard lock(self.mu);
    keys = plane_timed_events(self.profile(), plane, o);
  }
  std::vector<std::tuple<std::string, int64_t, uint64_t>> out;
  out.reserve(keys.size());
  for (auto& k : keys) out.emplace_back(std::move(k.key), k.time_ps, k.occurrences);
  return out;
}

}  // namespace

void bind_analyses(nb::module_& m) {
  profile_class()
      .def("ops_json", &ops_json, "group_by"_a, "device"_a, "prefix"_a, "match"_a,
           "min_duration_ps"_a, "max_events"_a, "top"_a, "format"_a = "json",
           "by_program"_a = false)
      .def("info_json", &info_json, "format"_a = "json")
      .def("timeline_json", &timeline_json, "format"_a = "json")
      .def("modules_json", &modules_json, "top_ops"_a, "format"_a = "json")
      .def("kernels_json", &kernels_json, "device"_a, "prefix"_a, "match"_a, "min_duration_ps"_a,
           "top"_a, "format"_a = "json")
      .def("roofline", &roofline, "device"_a, "prefix"_a, "match"_a, "min_duration_ps"_a, "top"_a,
           "peak_tflops"_a, "peak_gbps"_a, "device_model"_a, "latency_floor_ps"_a, "shown"_a = 0)
      .def("plane_timing", &plane_timing, "plane"_a, "prefix"_a, "regex"_a, "min_duration_ps"_a,
           "max_events"_a, "threads"_a = 0)
      .def("flame", &flame, "by"_a, "device"_a, "idle"_a)
      .def("collectives_json", &collectives_json, "device"_a, "top"_a, "instances"_a,
           "format"_a = "json")
      .def("memory", &memory, "only"_a, "allocator"_a, "module"_a, "top"_a, "points"_a)
      .def("compile_json", &compile_json, "top_steps"_a, "format"_a = "json", "top"_a = 0)
      .def("summary", &summary_render, "top"_a, "observations"_a, "text"_a)
      .def("export_perfetto", &export_perfetto, "path"_a, "align"_a = true,
           "critical_path"_a = false)
      .def("set_apart_json", &set_apart_json);

  nb::class_<PyFlame>(m, "Flame")
      .def("json", &PyFlame::json)
      .def("table", &PyFlame::table, "top"_a)
      .def("svg", &PyFlame::svg, "title"_a, "width"_a, "min_fraction"_a)
      .def("folded", &PyFlame::folded)
      .def("speedscope", &PyFlame::speedscope);
}

}  // namespace jaxprof::python
