// jaxprof timeline: how each device's span splits into compute, exposed communication, exposed
// memory copies and idle time.
#include "cli_common.h"
#include "jaxprof/analysis/timeline.h"
#include "jaxprof/render/timeline_render.h"

namespace jaxprof::cli {
namespace {

RegisterCommand timeline_command(26, [](CLI::App& app) -> std::function<int()> {
  auto o = std::make_shared<CommonOptions>();
  auto* cmd = app.add_subcommand(
      "timeline", "Per device: compute, exposed communication, exposed memcpy and idle time");
  cmd->footer(
      "Per device, from its first op to its last: compute (union of compute op intervals),\n"
      "communication not overlapped by compute, memcpy overlapped by neither, and idle time,\n"
      "split into idle inside module executions and idle between them. The four parts add up\n"
      "to the span exactly. Categories come from the HLO opcode, else the kernel name.\n"
      "See docs/timeline.md.");
  add_common(cmd, *o);
  add_host_by_host(cmd, *o);
  return [o]() {
    LoadedPartials loaded;
    load_set(*o, kPartTimeline, loaded);
    TimelineResult r = timeline_from_partials(loaded.set);
    write(render_timeline(r, format_of(*o)));
    return 0;
  };
});

}  // namespace
}  // namespace jaxprof::cli
