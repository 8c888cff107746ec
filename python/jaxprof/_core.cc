// The Python binding: a thin layer over the C++ core. Profiles load and analyse in C++ with the
// GIL released; event columns are handed to NumPy as read-only views that keep the Profile alive;
// analysis results cross as the CLI's JSON (docs/json.md), so Python and the CLI agree exactly.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/unique_ptr.h>
#include <nanobind/stl/vector.h>

#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "jaxprof/analysis/autotune/autotune_report.h"
#include "jaxprof/analysis/collectives/collectives.h"
#include "jaxprof/analysis/compile/compile.h"
#include "jaxprof/analysis/ops/device_events.h"
#include "jaxprof/analysis/ops/event_filter.h"
#include "jaxprof/analysis/flame/flame.h"
#include "jaxprof/analysis/hosts/hosts.h"
#include "jaxprof/analysis/partial/extract_partials.h"
#include "jaxprof/analysis/summary/info.h"
#include "jaxprof/analysis/ops/kernels.h"
#include "jaxprof/analysis/memory/memory.h"
#include "jaxprof/analysis/steps/modules.h"
#include "jaxprof/analysis/ops/ops.h"
#include "jaxprof/analysis/ops/plane_timing.h"
#include "jaxprof/analysis/cost/roofline.h"
#include "jaxprof/analysis/summary/summary.h"
#include "jaxprof/analysis/timeline/timeline.h"
#include "jaxprof/autotune/cache.h"
#include "jaxprof/autotune/labels.h"
#include "jaxprof/common/error.h"
#include "jaxprof/formats/load.h"
#include "jaxprof/pipeline/load_partials.h"
#include "jaxprof/formats/partial/partial_file.h"
#include "jaxprof/formats/partial/partial_spill.h"
#include "jaxprof/formats/partial/session_check.h"
#include "jaxprof/formats/xplane/xplane.h"
#include "jaxprof/render/text/autotune_render.h"
#include "jaxprof/render/text/collectives_render.h"
#include "jaxprof/render/text/compile_render.h"
#include "jaxprof/render/flame/flame_folded.h"
#include "jaxprof/render/flame/flame_speedscope.h"
#include "jaxprof/render/flame/flame_svg.h"
#include "jaxprof/render/flame/flame_text.h"
#include "jaxprof/render/text/hosts_render.h"
#include "jaxprof/render/text/info_render.h"
#include "jaxprof/render/text/input_render.h"
#include "jaxprof/render/text/kernels_render.h"
#include "jaxprof/render/html/memory_chart.h"
#include "jaxprof/render/text/memory_render.h"
#include "jaxprof/render/text/modules_render.h"
#include "jaxprof/render/text/ops_render.h"
#include "jaxprof/render/perfetto/perfetto.h"
#include "jaxprof/render/text/roofline_render.h"
#include "jaxprof/render/html/roofline_svg.h"
#include "jaxprof/render/text/steady_state_render.h"
#include "jaxprof/render/text/summary_render.h"
#include "jaxprof/render/text/timeline_render.h"
#include "_core_nsys_jax.h"
#include "_core_tables.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace jaxprof {
namespace {

struct PyProfile {
  LoadedProfile loaded;
  // Lines decode lazily (the Profile fills a cache behind const methods): one decoder at a time,
  // since calls run with the GIL released.
  std::mutex mu;
  // What the analyses count besides the steady state (set by load()).
  SteadyStateOptions steady;
  const Profile& profile() const { return loaded.profile; }
};

template <typename T>
using View = nb::ndarray<nb::numpy, const T, nb::ndim<1>>;
template <typename T>
using Owned = nb::ndarray<nb::numpy, T, nb::ndim<1>>;

template <typename T>
View<T> view(PyProfile& self, const Column<T>& col) {
  // The owner is the Python Profile object: the array keeps it (and so the column) alive.
  return View<T>(col.data(), {col.size()}, nb::find(&self));
}

template <typename T>
Owned<T> owned(std::vector<T>&& values) {
  auto* heap = new std::vector<T>(std::move(values));
  nb::capsule owner(heap, [](void* p) noexcept { delete static_cast<std::vector<T>*>(p); });
  return Owned<T>(heap->data(), {heap->size()}, owner);
}

std::unique_ptr<PyProfile> load(std::vector<std::string> paths, std::string session,
                                std::vector<std::string> hosts) {
  auto p = std::make_unique<PyProfile>();
  nb::gil_scoped_release release;
  LoadOptions options;
  options.session = std::move(session);
  options.hosts = std::move(hosts);
  load_profile(paths, options, p->loaded);
  return p;
}

std::unique_ptr<PyProfile> from_bytes(nb::bytes data, std::string name) {
  std::vector<uint8_t> bytes(data.size());
  std::memcpy(bytes.data(), data.c_str(), data.size());
  auto p = std::make_unique<PyProfile>();
  nb::gil_scoped_release release;
  std::string label = "<bytes:" + name + ">";
  if (has_gzip_magic(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size())))
    bytes = gunzip(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()),
                   label, size_t(1) << 36);
  auto buffer = Buffer::from_bytes(std::move(bytes), label);
  Profile& profile = p->loaded.profile;
  import_xspace(profile, buffer, name);
  index_hlo_from_metadata(profile);
  finish_import(profile);
  return p;
}

// Partial summaries (docs/multihost.md): what jaxprof.distributed computes on workers and merges.
nb::bytes to_bytes(const std::string& s) { return nb::bytes(s.data(), s.size()); }

uint32_t parts_named(const std::string& what) {
  if (what == "all") return kPartAll;
  if (what == "summary") return summary_parts() | kPartSteps;  // and `hosts`
  throw InputError("", "unknown partial parts '" + what + "' (all or summary)");
}

// The partials of the hosts behind `paths` (profiles as the CLI takes them, or partials), one
// file's bytes; and the hosts skipped with keep_going as (host, path, reason).
std::tuple<nb::bytes, std::vector<std::tuple<std::string, std::string, std::string>>>
partials_of_paths(std::vector<std::string> paths, std::string session,
                  std::vector<std::string> hosts, unsigned threads, bool keep_going,
                  std::string parts) {
  std::string bytes;
  std::vector<std::tuple<std::string, std::string, std::string>> skipped;
  {
    nb::gil_scoped_release release;
    PartialLoadOptions o;
    o.session = std::move(session);
    o.hosts = std::move(hosts);
    o.extract.parts = parts_named(parts);
    o.import.threads = threads;
    o.keep_going = keep_going;
    LoadedPartials loaded;
    load_partials(paths, o, loaded);
    bytes = write_partial_file(loaded.set);
    for (const SkippedHost& s : loaded.skipped) skipped.emplace_back(s.host, s.path, s.reason);
  }
  return {to_bytes(bytes), skipped};
}

// One XSpace's bytes (read wherever the caller runs, e.g. from object storage) as its partial.
nb::bytes partial_of_bytes(nb::bytes data, std::string host, std::string path, std::string parts) {
  std::vector<uint8_t> bytes(data.size());
  std::memcpy(bytes.data(), data.c_str(), data.size());
  std::string out;
  {
    nb::gil_scoped_release release;
    const uint64_t file_bytes = bytes.size();
    std::string_view view(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    if (has_gzip_magic(view)) bytes = gunzip(view, path, size_t(1) << 40);
    Profile profile;
    import_xspace(profile, Buffer::from_bytes(std::move(bytes), path), host);
    index_hlo_from_metadata(profile);
    finish_import(profile);
    PartialExtractOptions extract;
    extract.parts = parts_named(parts);
    std::vector<HostPartial> one = extract_partials(profile, extract);
    one.front().path = path;
    one.front().file_bytes = file_bytes;
    out = write_partial_file({&one.front()});
  }
  return to_bytes(out);
}

// `names` name the files in messages (their paths or URLs); files made in this process by the
// writer, which have none, are numbered. The hosts wait in a temporary file
// (formats/partial/partial_spill.h) and are decoded one at a time where the analyses allow it: merging
// and summarising a thousand hosts takes the memory of a few.
PartialSet read_set(const std::vector<nb::bytes>& files,
                    const std::vector<std::string>& names = {}) {
  auto spill = std::make_shared<PartialSpill>();
  for (size_t i = 0; i < files.size(); ++i)
    read_partial_file_each(std::string_view(files[i].c_str(), files[i].size()),
                           i < names.size() ? names[i] : "<partial " + std::to_string(i + 1) + ">",
                           [&](HostPartial&& h) { spill->put(spill->add_slot(), h); });
  PartialSet set;
  set.add_stored(spill, spill->filled_slots());
  return set;
}

// Warnings when the hosts of `file` may not be one capture's (named one by one); throws
// InputError when they were found in one directory (`from_directory`) and cannot be.
std::vector<std::string> check_partial_capture(nb::bytes file, std::string path,
                                               bool from_directory) {
  PartialSet set = read_set({file});
  ProfileFiles files;
  files.path = path;
  files.layout = from_directory ? ProfileLayout::kRunDir : ProfileLayout::kFile;
  std::vector<CaptureFacts> facts;
  for (const HostPartial& h : set.heads()) {
    files.hosts.push_back({h.host, h.path});
    facts.push_back(capture_facts(h));
  }
  std::vector<std::string> warnings;
  if (facts.size() > 1) check_one_capture(files, facts, warnings);
  return warnings;
}

// The union of partial files, as one file (the hosts in order; the same host twice is an error).
nb::bytes merge_partials(std::vector<nb::bytes> files, std::vector<std::string> names) {
  PartialSet set = read_set(files, names);
  std::string out;
  {
    nb::gil_scoped_release release;
    out = write_partial_file(set);
  }
  return to_bytes(out);
}

// `jaxprof summary` or `jaxprof hosts` of a set of partial files, in a CLI output format.
std::string render_partials(std::vector<nb::bytes> files, std::string command, std::string format,
                            size_t top, size_t observations) {
  OutputFormat f = OutputFormat::kTable;
  if (!parse_output_format(format, f)) throw InputError("", "unknown format '" + format + "'");
  PartialSet set = read_set(files);
  nb::gil_scoped_release release;
  if (command == "summary") {
    SummaryOptions o;
    o.top = top;
    o.observations = observations;
    return render_summary(summary_from_partials(set, o), f);
  }
  if (command == "hosts") return render_hosts(hosts_from_partials(set), f, top);
  throw InputError("", "unknown command '" + command + "' (summary or hosts)");
}

// Host names and file sizes of a partial file, without analysing it.
std::vector<std::tuple<std::string, std::string, uint64_t>> partial_hosts(nb::bytes file) {
  std::vector<std::tuple<std::string, std::string, uint64_t>> out;
  for (const HostPartial& h :
       read_partial_file(std::string_view(file.c_str(), file.size()), "<partial>"))
    out.emplace_back(h.host, h.path, h.file_bytes);
  return out;
}

// What was read, as the command line says it: its stderr line and its JSON "input" member.
std::pair<std::string, std::string> describe_input(
    std::string path, std::string layout, std::string session, std::string session_dir,
    std::vector<std::string> sessions, bool newest_by_default,
    std::vector<std::pair<std::string, std::string>> hosts) {
  ProfileFiles f;
  f.path = std::move(path);
  if (layout == "run-dir")
    f.layout = ProfileLayout::kRunDir;
  else if (layout == "log-dir")
    f.layout = ProfileLayout::kLogDir;
  else if (layout != "file")
    throw InputError("", "unknown layout '" + layout + "' (file, run-dir or log-dir)");
  f.session = std::move(session);
  f.session_dir = std::move(session_dir);
  f.sessions = std::move(sessions);
  f.newest_by_default = newest_by_default;
  for (auto& [host, file] : hosts) f.hosts.push_back({std::move(host), std::move(file)});
  return {render_input_line(f), render_input_json(f)};
}

nb::list planes(const PyProfile& self) {
  const Profile& pr = self.profile();
  nb::list out;
  for (size_t i = 0; i < pr.planes.size(); ++i) {
    const Plane& p = pr.planes[i];
    uint64_t events = 0;
    for (uint32_t l : p.lines) events += pr.lines[l].event_count;
    nb::dict d;
    d["index"] = i;
    d["name"] = std::string(pr.str(p.name));
    d["id"] = p.id;
    d["kind"] = plane_kind_name(p.kind);
    d["host"] = pr.hosts[p.host].name;
    d["lines"] = p.lines.size();
    d["events"] = events;
    out.append(d);
  }
  return out;
}

nb::list lines(const PyProfile& self) {
  const Profile& pr = self.profile();
  nb::list out;
  for (size_t i = 0; i < pr.lines.size(); ++i) {
    const Line& l = pr.lines[i];
    out.append(
        nb::make_tuple(l.plane, std::string(pr.str(l.name)), l.id, l.first_event, l.event_count));
  }
  return out;
}

nb::list devices(PyProfile& self) {
  std::vector<DeviceLines> devs;
  {
    nb::gil_scoped_release release;
    std::lock_guard lock(self.mu);
    devs = op_devices(self.profile());
  }
  const Profile& pr = self.profile();
  nb::list out;
  for (const DeviceLines& d : devs) {
    nb::dict row;
    row["name"] = d.name;
    row["host"] = pr.hosts[pr.planes[d.plane].host].name;
    row["plane"] = d.plane;
    row["lines"] = d.lines.size();
    out.append(row);
  }
  return out;
}

// Indices of a device's op events, in line order (each line start-sorted).
Owned<uint32_t> device_events(PyProfile& self, uint32_t plane, const std::string& name) {
  std::vector<uint32_t> idx;
  bool found = false;
  {
    nb::gil_scoped_release release;
    std::lock_guard lock(self.mu);
    const Profile& pr = self.profile();
    for (const DeviceLines& d : op_devices(pr)) {
      if (d.plane != plane || d.name != name) continue;
      found = true;
      pr.require_lines(d.lines);
      for (uint32_t li : d.lines) {
        const Line& l = pr.lines[li];
        for (uint32_t e = l.first_event; e < l.first_event + l.event_count; ++e)
          if (d.counts(pr.events, e)) idx.push_back(e);
      }
    }
  }
  if (!found) throw nb::key_error(("no device " + name).c_str());
  return owned(std::move(idx));
}

void require_all(PyProfile& self) {
  nb::gil_scoped_release release;
  std::lock_guard lock(self.mu);
  self.profile().require_all_lines();
}

void require_plane(PyProfile& self, uint32_t plane) {
  if (plane >= self.profile().planes.size()) throw nb::index_error("plane index out of range");
  nb::gil_scoped_release release;
  std::lock_guard lock(self.mu);
  self.profile().require_lines(self.profile().planes[plane].lines);
}

nb::list string_list(const Profile& pr, size_t n, auto&& at) {
  nb::list out;
  for (size_t i = 0; i < n; ++i) {
    std::string_view s = at(i);
    // Names come from the file: decode leniently rather than fail on bad UTF-8.
    out.append(nb::steal(PyUnicode_DecodeUTF8(s.data(), Py_ssize_t(s.size()), "replace")));
  }
  (void)pr;
  return out;
}

// "json" (what Python parses) or "table" (what a result prints, as the CLI does).
OutputFormat py_format(const std::string& format) {
  OutputFormat f = OutputFormat::kJson;
  if (!parse_output_format(format, f) || f == OutputFormat::kCsv)
    throw InputError("", "format='" + format + "': expected 'json' or 'table'");
  return f;
}

// Filters named as the Python caller writes them.
EventFilterSpec py_filter() {
  EventFilterSpec f;
  f.names = {.match = "match=", .device = "device=", .min_duration = "min_duration_ns="};
  return f;
}

std::string ops_json(PyProfile& self, const std::string& group_by, const std::string& device,
                     const std::string& prefix, const std::string& match, int64_t min_duration_ps,
                     uint64_t max_events, size_t top, const std::string& format,
                     bool by_program) {
  OpsOptions o;
  o.filter = py_filter();
  o.by_program = by_program;
  if (!parse_group_by(group_by, o.group_by))
    throw InputError("", "group_by='" + group_by +
                             "': expected one of 'hlo-op', 'kernel', 'module', 'name', "
                             "'category', 'opcode'");
  OutputFormat f = py_format(format);
  o.filter.device = device;
  o.filter.prefix = prefix;
  o.filter.match = match;
  o.filter.min_duration_ps = min_duration_ps;
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
  o.filter = py_filter();
  o.filter.device = device;
  o.filter.prefix = prefix;
  o.filter.match = match;
  o.filter.min_duration_ps = min_duration_ps;
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
  o.filter = py_filter();
  o.filter.device = device;
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

// What was read (the CLI's "input" JSON member).
std::string input_json(const PyProfile& self) { return render_input_json(self.loaded.files); }

// What the steady-state figures leave out (the CLI's "set_apart" JSON member, compiles included).
std::string set_apart_json(PyProfile& self) {
  nb::gil_scoped_release release;
  std::lock_guard lock(self.mu);
  const Profile& p = self.profile();
  return render_set_apart_json(
      summarize_set_apart(steady_state(p, self.steady), &steady_state_time(p, self.steady)));
}

// The Perfetto/Chrome trace of `jaxprof export --perfetto` (the same code), written to `path`.
nb::dict export_perfetto(PyProfile& self, const std::string& path) {
  PerfettoSummary s;
  {
    nb::gil_scoped_release release;
    std::lock_guard lock(self.mu);
    s = write_perfetto_file(self.profile(), path);
  }
  nb::dict d;
  d["devices"] = s.devices;
  d["op_events"] = s.op_events;
  d["segments"] = s.segments;
  d["executions"] = s.executions;
  d["collective_events"] = s.collective_events;
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

// InputError becomes a jaxprof.ProfileError subclass, built in Python (jaxprof/errors.py) so that
// the hierarchy lives in one readable place.
void translate(const std::exception_ptr& p, void*) {
  try {
    std::rethrow_exception(p);
  } catch (const InputError& e) {
    try {
      nb::object make = nb::module_::import_("jaxprof.errors").attr("_from_core");
      nb::object exc = make(e.file(), e.reason(), e.offset(), std::string(e.what()));
      PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(exc.ptr())), exc.ptr());
    } catch (nb::python_error& pe) {
      pe.restore();
    }
  }
}

}  // namespace
}  // namespace jaxprof

NB_MODULE(_core, m) {
  using namespace jaxprof;
  m.doc() = "jaxprof C++ core (use the jaxprof package, not this module)";
  nb::register_exception_translator(translate);
  bind_tables(m, [](nb::handle h) {
    auto& s = nb::cast<PyProfile&>(h);
    return ProfileAccess{&s.profile(), &s.mu};
  });
  bind_nsys_jax(m, [](nb::handle h) {
    auto& s = nb::cast<PyProfile&>(h);
    return ProfileAccess{&s.profile(), &s.mu};
  });
  // Tables printed from Python say how to see all rows in Python terms (top=0, .rows).
  set_table_layout({.wide = false, .line_width = 0, .python = true});

  nb::class_<PyProfile>(m, "Profile")
      .def_prop_ro("num_events", [](const PyProfile& s) { return s.profile().events.size(); })
      .def_prop_ro("base_ns", [](const PyProfile& s) { return s.profile().base_ns; })
      .def_prop_ro("hosts",
                   [](const PyProfile& s) {
                     std::vector<std::tuple<std::string, std::string>> out;
                     for (const Host& h : s.profile().hosts) out.emplace_back(h.name, h.path);
                     return out;
                   })
      .def_prop_ro("warnings", [](const PyProfile& s) { return s.profile().warnings; })
      .def_prop_ro("errors", [](const PyProfile& s) { return s.profile().errors; })
      .def("planes", &planes)
      .def("lines", &lines)
      .def("devices", &devices)
      .def("device_events", &device_events, "plane"_a, "name"_a)
      .def("require_all", &require_all)
      .def("require_plane", &require_plane, "plane"_a)
      .def("start_ps", [](PyProfile& s) { return view(s, s.profile().events.start_ps); })
      .def("duration_ps", [](PyProfile& s) { return view(s, s.profile().events.duration_ps); })
      .def("op_duration_ps",
           [](PyProfile& s) {
             // The ops' own durations: the device clock where events carry it (a copy).
             const Profile& pr = s.profile();
             std::vector<int64_t> out(pr.events.duration_ps.begin(), pr.events.duration_ps.end());
             for (const Line& line : pr.lines)
               if (line.decoded && line.device_clock)
                 for (uint32_t e = line.first_event; e < line.first_event + line.event_count; ++e)
                   out[e] = pr.events.op_duration_ps(line, e);
             return owned(std::move(out));
           })
      .def("metadata", [](PyProfile& s) { return view(s, s.profile().events.metadata); })
      .def("hlo_op", [](PyProfile& s) { return view(s, s.profile().events.hlo_op); })
      .def("module", [](PyProfile& s) { return view(s, s.profile().events.module); })
      .def("metadata_names",
           [](const PyProfile& s) {
             const Profile& pr = s.profile();
             return string_list(pr, pr.event_metadata.size(),
                                [&](size_t i) { return pr.str(pr.event_metadata[i].name); });
           })
      .def("strings",
           [](const PyProfile& s) {
             const Profile& pr = s.profile();
             return string_list(pr, pr.strings.size(), [&](size_t i) { return pr.strings[i]; });
           })
      .def("module_labels",
           [](const PyProfile& s) {
             const Profile& pr = s.profile();
             std::vector<std::string> out;
             out.emplace_back();  // 0 = no module
             for (size_t i = 1; i < pr.modules.size(); ++i)
               out.push_back(pr.module_label(uint32_t(i)));
             return out;
           })
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
      .def("export_perfetto", &export_perfetto, "path"_a)
      .def("input_json", &input_json)
      .def("set_apart_json", &set_apart_json)
      .def(
          "set_steady_state",
          [](PyProfile& s, bool include_autotuning, bool include_warmup) {
            s.steady = {.include_autotuning = include_autotuning, .include_warmup = include_warmup};
          },
          "include_autotuning"_a, "include_warmup"_a)
      .def("autotune_report_json", &autotune_report_json, "pattern"_a, "include_warmup"_a,
           "resamples"_a, "seed"_a);

  nb::class_<PyFlame>(m, "Flame")
      .def("json", &PyFlame::json)
      .def("table", &PyFlame::table, "top"_a)
      .def("svg", &PyFlame::svg, "title"_a, "width"_a, "min_fraction"_a)
      .def("folded", &PyFlame::folded)
      .def("speedscope", &PyFlame::speedscope);

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
  m.def("load", &load, "paths"_a, "session"_a, "hosts"_a);
  m.def("from_bytes", &from_bytes, "data"_a, "name"_a);
  m.def("partials_of_paths", &partials_of_paths, "paths"_a, "session"_a, "hosts"_a, "threads"_a,
        "keep_going"_a, "parts"_a);
  m.def("partial_of_bytes", &partial_of_bytes, "data"_a, "host"_a, "path"_a, "parts"_a);
  m.def("merge_partials", &merge_partials, "files"_a, "names"_a = std::vector<std::string>{});
  // For command-line tools built on the package (jaxprof-dask): the CLI's table layout and hints.
  m.def(
      "set_table_layout",
      [](bool wide, size_t line_width, bool python) {
        set_table_layout({.wide = wide, .line_width = line_width, .python = python});
      },
      "wide"_a, "line_width"_a, "python"_a);
  m.def("format_bytes", [](double bytes) { return human_bytes(bytes); }, "bytes"_a);
  m.def("check_partial_capture", &check_partial_capture, "file"_a, "path"_a, "from_directory"_a);
  m.def("render_partials", &render_partials, "files"_a, "command"_a, "format"_a, "top"_a,
        "observations"_a);
  m.def("partial_hosts", &partial_hosts, "file"_a);
  m.def("describe_input", &describe_input, "path"_a, "layout"_a, "session"_a, "session_dir"_a,
        "sessions"_a, "newest_by_default"_a, "hosts"_a);
}
