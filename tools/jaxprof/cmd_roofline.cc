// jaxprof roofline: is each op as fast as the hardware allows, and what bounds it?
#include <fmt/format.h>

#include "cli_common.h"
#include "jaxprof/analysis/cost/hardware_peaks_table.h"
#include "jaxprof/analysis/cost/roofline.h"
#include "jaxprof/common/error.h"
#include "jaxprof/render/text/roofline_render.h"
#include "jaxprof/render/html/roofline_svg.h"

namespace jaxprof::cli {
namespace {

RegisterCommand roofline_command(28, [](CLI::App& app) -> std::function<int()> {
  struct Options {
    CommonOptions common;
    std::string device_model, svg;
    EventFilterFlags filter;
    std::vector<std::string> peak_tflops;
    double peak_gbps = 0;
    double latency_floor_us = 2;
    size_t top = 0;
    SteadyStateOptions steady;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = app.add_subcommand(
      "roofline",
      "Per HLO op and program: FLOPs, bytes, achieved FLOP/s and bandwidth, intensity, what "
      "bounds it, efficiency against the roofline, predicted against measured time");
  cmd->footer(
      "FLOPs and bytes come, for each op, from the profile's own stats (flops, bytes_accessed),\n"
      "else the HLO the profile carries (dots, convolutions, fusions, elementwise ops), else a\n"
      "custom call's shapes and config (cuBLAS/hipBLASLt GEMMs, cuDNN/MIOpen convolutions, cuDNN\n"
      "and Transformer Engine attention, Pallas cost estimates), else a copy's memcpy_details\n"
      "size; otherwise they are unknown and shown as such. The 'source' column says which.\n"
      "Peaks come from flags, the device's peak stats, a table of known accelerators, or the\n"
      "device's clock and core count, and the output names each figure's source.\n"
      "Bound: compute or memory by the roofline; latency when the roofline time per execution\n"
      "is under --latency-floor and the op reaches under half its attainable rate;\n"
      "communication for collectives; async for a copy-start/done whose bytes move outside its\n"
      "own time. See docs/roofline.md.\n"
      "Examples:\n"
      "  jaxprof roofline prof.xplane.pb --top 20\n"
      "  jaxprof roofline run/ --device-model h100-sxm --format json\n"
      "  jaxprof roofline cpu_run/ --peak-tflops 2.5 --peak-gbps 100");
  add_common(cmd, o->common);
  add_event_filter_options(cmd, o->filter);
  auto* top = cmd->add_option("--top", o->top,
                              "Show the N longest ops per device (0 = all; default: all, or " +
                                  std::to_string(kTerminalTop) + " in a table on a terminal)");
  cmd->add_option("--peak-tflops", o->peak_tflops,
                  "Peak TFLOP/s, as TYPE=N for one compute type (vector, fp64, fp32, tf32, bf16, "
                  "fp16, fp8, int8) or N for all; repeatable; overrides stats and table");
  cmd->add_option("--peak-gbps", o->peak_gbps,
                  "Peak memory bandwidth in GB/s (10^9 bytes/s); overrides stats and table")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--device-model", o->device_model,
                  "Take the peaks of this known accelerator: " +
                      fmt::format("{}", fmt::join(known_device_models(), ", ")));
  cmd->add_option("--latency-floor", o->latency_floor_us,
                  "Roofline time per execution (us) under which a slow op is latency-bound")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--svg", o->svg,
                  "Also write the roofline chart of each device to this SVG file (one chart "
                  "under another)");
  add_steady_state_options(cmd, o->steady);
  return [o, top]() {
    RooflineOptions opts;
    opts.steady = o->steady;
    opts.filter = o->filter.spec();
    opts.latency_floor_ps = static_cast<int64_t>(o->latency_floor_us * 1e6 + 0.5);
    opts.top = o->top;
    for (const std::string& p : o->peak_tflops)
      if (!parse_peak_flops(p, opts.peaks))
        throw InputError("", "--peak-tflops '" + p +
                                 "': expected N or TYPE=N with TYPE one of vector, fp64, fp32, "
                                 "tf32, bf16, fp16, fp8, int8 and N > 0 (TFLOP/s)");
    opts.peaks.bytes_per_s = o->peak_gbps * 1e9;
    opts.peaks.model = o->device_model;
    if (!o->device_model.empty() && !find_accelerator(o->device_model))
      throw InputError("", "unknown --device-model '" + o->device_model + "' (known: " +
                               fmt::format("{}", fmt::join(known_device_models(), ", ")) + ")");
    EventFilter check(opts.filter);  // reject a bad regex before loading anything
    LoadedProfile loaded;
    // Telling steady executions apart reads the host's launches on GPUs.
    load(o->common, loaded, opts.steady.include_autotuning && opts.steady.include_warmup);
    RooflineResult r = compute_roofline(loaded.profile, opts);
    say_set_apart(loaded.profile, opts.steady, false, format_of(o->common) == OutputFormat::kJson);
    warn(loaded.profile.warnings);
    warn(r.warnings);
    if (!o->svg.empty()) {
      write_file(o->svg, roofline_svg_stack(r.devices), "roofline chart (SVG)");
    }
    const OutputFormat format = format_of(o->common);
    write(render_roofline(r, format, o->top ? 0 : top_for(top, 0, format)));
    return 0;
  };
});

}  // namespace
}  // namespace jaxprof::cli
