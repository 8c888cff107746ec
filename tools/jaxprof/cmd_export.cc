// jaxprof export: the whole capture as a Perfetto trace (Perfetto's protobuf, or Chrome trace
// JSON) with derived tracks; or every table of every host as Parquet, which the Python package
// writes (Arrow and Parquet are Python wheels here, as DuckDB is for `sql`).
#include <fmt/format.h>

#include "cli_common.h"
#include "jaxprof/common/error.h"
#include "jaxprof/render/perfetto/perfetto.h"
#include "python_handoff.h"
#include "window_options.h"

namespace jaxprof::cli {
namespace {

// The tables as Parquet, written by the Python package with the same paths and selection.
template <typename Options>
int export_parquet(const Options& o) {
  if (!o.window.steps.empty() || !o.window.time.empty() || o.window.no_align ||
      o.window.critical_path || o.format != "auto")
    throw InputError("",
                     "--parquet writes every row of every table; --steps, --time, --no-align, "
                     "--critical-path and --trace-format apply to --perfetto");
  std::vector<std::string> args = {"export", "--parquet", o.parquet};
  args.insert(args.end(), o.common.paths.begin(), o.common.paths.end());
  if (!o.common.session.empty()) args.insert(args.end(), {"--session", o.common.session});
  for (const std::string& h : o.common.hosts) args.insert(args.end(), {"--host", h});
  if (o.common.threads != 0)
    args.insert(args.end(), {"--threads", std::to_string(o.common.threads)});
  if (o.dask) args.push_back("--dask");
  if (!o.scheduler.empty()) args.insert(args.end(), {"--scheduler", o.scheduler});
  return exec_python("jaxprof.parquet_export", std::move(args));
}

RegisterCommand export_command(90, [](CLI::App& app) -> std::function<int()> {
  struct Options {
    CommonOptions common;
    std::string perfetto, parquet, scheduler;
    bool dask = false;
    std::string format = "auto";
    WindowFlags window;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = app.add_subcommand(
      "export",
      "Write the whole capture as a Perfetto trace (protobuf; *.json or *.json.gz: JSON), or "
      "every table of every host as Parquet");
  cmd->footer(
      "Every line of every device and host plane with every event and its stats (your\n"
      "TraceAnnotation / annotate / trace_function ranges, Python, launches, TPU Steps, NVTX),\n"
      "arrows from each host launch to its kernels and from each collective's first arrival\n"
      "to its last, memory in use per allocator, and per\n"
      "device a 'category' track (compute, exposed communication, exposed memcpy, idle) and a\n"
      "'modules' track; op events carry their HLO name, JAX op path, source line, category and\n"
      "collective bandwidth. Open the file in ui.perfetto.dev. See docs/export.md.\n"
      "A window (--steps, --time) keeps the events that overlap it, whole, clips the memory\n"
      "counters to it and keeps the arrows whose both ends are kept; a note says how much.\n"
      "A trace that would pass --warn-size gets a warning with a window that fits.\n"
      "--parquet DIR writes every table (docs/tables.md) of every host as Hive-partitioned\n"
      "Parquet, DIR/<table>/host=<host>/part.parquet, --threads hosts at a time (default one\n"
      "per core; or one Dask task per host with --dask or --scheduler); runs python3 -m\n"
      "jaxprof.parquet_export\n"
      "(pip install 'jaxprof[sql]'; Dask: 'jaxprof[distributed]').");
  add_common(cmd, o->common, /*formats=*/{});  // the file is the output
  cmd->add_option("--perfetto", o->perfetto,
                  "Output file: Perfetto's protobuf (*.pftrace, any name), or Chrome trace JSON "
                  "(*.json, *.json.gz); .gz compresses");
  cmd->add_option("--parquet", o->parquet,
                  "Output directory (new or empty) for every table of every host as Parquet");
  cmd->add_flag("--dask", o->dask, "--parquet: one task per host on a Dask LocalCluster");
  cmd->add_option("--scheduler", o->scheduler,
                  "--parquet: one task per host on this Dask scheduler (workers must see DIR)");
  // Not --format: that flag picks how a command prints (table, json, csv); this is the file's.
  cmd->add_option("--trace-format", o->format,
                  "proto or json (default auto: json for *.json and *.json.gz, else proto)")
      ->check(CLI::IsMember({"auto", "proto", "json"}))
      ->capture_default_str();
  add_window_options(cmd, o->window);
  return [o]() {
    if (o->perfetto.empty() == o->parquet.empty())
      throw InputError("", "give --perfetto FILE or --parquet DIR (one of them)");
    if (!o->parquet.empty()) return export_parquet(*o);
    if (o->dask || !o->scheduler.empty())
      throw InputError("", "--dask and --scheduler apply to --parquet");
    LoadedProfile loaded;
    // Every page goes back once counted: the lines are read one at a time, each decoded and
    // written, and their bytes handed back again (PerfettoOptions::one_line_at_a_time).
    load(o->common, loaded, /*release_counted=*/true);
    TraceFormat asked = o->format == "proto"  ? TraceFormat::kProto
                        : o->format == "json" ? TraceFormat::kJson
                                              : TraceFormat::kAuto;
    bool proto = trace_format_of(o->perfetto, asked) == TraceFormat::kProto;
    std::optional<TraceWindow> window = resolve_window(o->window, loaded.profile);
    warn_if_too_big(o->window, loaded.profile, proto, window);
    WindowCounts counts;
    PerfettoSummary s = write_trace(loaded.profile, o->perfetto, asked, window, counts, o->window);
    warn(loaded.profile.warnings);
    // With a window, the counts are of the capture the window was cut from.
    std::string of = window ? fmt::format(" of {} ({} of {} slices), cut from", window->label,
                                          counts.slices_kept, counts.slices)
                            : ",";
    announce_written(
        o->perfetto,
        fmt::format("{}{} {} devices, {} op events, {} host events, {} category segments, {} "
                    "module executions, {} collective events with bandwidth, {} launch arrows, "
                    "{} collective arrival arrows, {} memory counter tracks",
                    proto ? "Perfetto protobuf trace" : "Perfetto/Chrome trace (JSON)", of,
                    s.devices, s.op_events, s.host_events, s.segments, s.executions,
                    s.collective_events, s.flows, s.arrival_flows, s.counter_tracks) +
            (s.device_counter_tracks
                 ? fmt::format(", {} device counter tracks", s.device_counter_tracks)
                 : "") +
            (s.path_segments ? fmt::format(", {} critical-path segments", s.path_segments) : ""),
        "  open https://ui.perfetto.dev and use \"Open trace file\" (or `jaxprof view`)\n");
    return 0;
  };
});

}  // namespace
}  // namespace jaxprof::cli
