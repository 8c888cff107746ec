// jaxprof export: the whole capture as a Perfetto trace (Perfetto's protobuf, or Chrome trace
// JSON) with derived tracks.
#include <fmt/format.h>

#include "cli_common.h"
#include "jaxprof/common/error.h"
#include "jaxprof/render/perfetto/perfetto.h"
#include "window_options.h"

namespace jaxprof::cli {
namespace {

RegisterCommand export_command(90, [](CLI::App& app) -> std::function<int()> {
  struct Options {
    CommonOptions common;
    std::string perfetto;
    std::string format = "auto";
    WindowFlags window;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = app.add_subcommand(
      "export",
      "Write the whole capture as a Perfetto trace (protobuf; *.json or *.json.gz: JSON)");
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
      "A trace that would pass --warn-size gets a warning with a window that fits.");
  add_common(cmd, o->common, /*formats=*/{});  // the file is the output
  cmd->add_option("--perfetto", o->perfetto,
                  "Output file: Perfetto's protobuf (*.pftrace, any name), or Chrome trace JSON "
                  "(*.json, *.json.gz); .gz compresses")
      ->required();
  // Not --format: that flag picks how a command prints (table, json, csv); this is the file's.
  cmd->add_option("--trace-format", o->format,
                  "proto or json (default auto: json for *.json and *.json.gz, else proto)")
      ->check(CLI::IsMember({"auto", "proto", "json"}))
      ->capture_default_str();
  add_window_options(cmd, o->window);
  return [o]() {
    LoadedProfile loaded;
    load(o->common, loaded);
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
            (s.path_segments ? fmt::format(", {} critical-path segments", s.path_segments) : ""),
        "  open https://ui.perfetto.dev and use \"Open trace file\" (or `jaxprof view`)\n");
    return 0;
  };
});

}  // namespace
}  // namespace jaxprof::cli
