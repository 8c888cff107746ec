// jaxprof memory: what fills device memory, and when.
#include <cstdio>

#include "cli_common.h"
#include "jaxprof/analysis/memory/memory.h"
#include "jaxprof/render/text/memory_render.h"

namespace jaxprof::cli {
namespace {

RegisterCommand memory_command(29, [](CLI::App& app) -> std::function<int()> {
  struct Options {
    CommonOptions common;
    std::string only, allocator, module;
    size_t top = 10;
    size_t points = 1000;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = app.add_subcommand(
      "memory",
      "Memory: bytes in use over time per allocator, the peak and what was live at it, and each "
      "compiled program's static memory (peak heap, arguments, outputs, temporaries)");
  cmd->footer(
      "Allocators: from the MemoryAllocation/MemoryDeallocation events XLA's GPU and TPU\n"
      "allocators record on the host threads. 'peak in use' is the highest bytes_allocated of the\n"
      "capture; 'lifetime peak' is the allocator's own peak_bytes_in_use since the process\n"
      "started (when it is higher, the peak happened before the capture). What was live at the\n"
      "peak: allocations made during the capture and not yet freed, by op, shape and dtype.\n"
      "Programs: from XLA's buffer assignment in the profile's HloProtos (or HLO dumps passed\n"
      "beside it): peak heap as XProf's memory viewer computes it, and the largest buffers at\n"
      "that peak with their HLO instruction, JAX op and source line. See docs/memory.md.");
  add_common(cmd, o->common);
  cmd->add_option("--only", o->only, "Show only the allocator timeline or the programs")
      ->check(CLI::IsMember({"allocators", "programs"}));
  cmd->add_option("--allocator", o->allocator,
                  "Only allocators whose name or device contains this (e.g. GPU_0, TPU:1)");
  cmd->add_option("--module", o->module, "Only programs whose module name contains this");
  cmd->add_option("--top", o->top,
                  "Groups of live allocations and buffers listed at each peak (0 = all)")
      ->capture_default_str();
  cmd->add_option("--points", o->points,
                  "JSON: timeline points kept per allocator (the highest of each run of events; "
                  "0 = every event)")
      ->capture_default_str();
  return [o]() {
    MemoryOptions m;
    m.want_timeline = o->only != "programs";
    m.want_programs = o->only != "allocators";
    m.timeline.top = o->top;
    m.timeline.max_points = o->points;
    m.timeline.allocator = o->allocator;
    m.programs.top = o->top;
    m.programs.module = o->module;
    LoadedProfile loaded;
    load(o->common, loaded);
    MemoryResult r = compute_memory(loaded.profile, m);
    warn(loaded.profile.warnings);
    // Tables say it on stdout; for JSON/CSV the messages go to stderr so stdout stays parseable.
    if (format_of(o->common) != OutputFormat::kTable) {
      if (r.has_timeline && !r.timeline.no_events_reason.empty())
        std::fprintf(stderr, "jaxprof: %s\n", r.timeline.no_events_reason.c_str());
      if (r.has_programs && !r.no_programs_reason.empty())
        std::fprintf(stderr, "jaxprof: %s\n", r.no_programs_reason.c_str());
    }
    write(render_memory(r, format_of(o->common)));
    return 0;
  };
});

}  // namespace
}  // namespace jaxprof::cli
