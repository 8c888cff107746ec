// jaxprof flame: device time by source line, JAX op path or module, as a flamegraph.
#include <cstdio>

#include "cli_common.h"
#include "jaxprof/analysis/compile/compile.h"
#include "jaxprof/analysis/flame/flame.h"
#include "jaxprof/analysis/flame/flame_partial.h"
#include "jaxprof/analysis/partial/extract_partials.h"
#include "jaxprof/common/error.h"
#include "jaxprof/render/flame/flame_folded.h"
#include "jaxprof/render/flame/flame_speedscope.h"
#include "jaxprof/render/flame/flame_svg.h"
#include "jaxprof/render/flame/flame_text.h"

namespace jaxprof::cli {
namespace {

// "-" is stdout, so that `--folded - | flamegraph.pl` works.
void write_output(const std::string& path, const std::string& text, const std::string& what,
                  const std::string& next) {
  if (path == "-")
    write(text);
  else
    write_file(path, text, what, next);
}

RegisterCommand flame_command(40, [](CLI::App& app) -> std::function<int()> {
  struct Options {
    CommonOptions common;
    SteadyStateOptions steady;
    std::string by = "source", device, svg, folded, speedscope, title;
    size_t top = 20;
    bool idle = false, no_idle = false;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = app.add_subcommand(
      "flame", "Device time as a flamegraph by source line, JAX op path or module");
  cmd->footer(
      "Each device's busy time is split exactly over its ops (overlapping streams share an\n"
      "instant equally), and a fusion's time equally over its fused instructions that carry\n"
      "metadata. Without -o/--folded/--speedscope the heaviest stacks are printed; --format json\n"
      "prints the whole tree. Folded weights are integer picoseconds. Hosts are read one by\n"
      "one; partial files (jaxprof partial) give the same flamegraph as their profiles. See\n"
      "docs/flame.md and docs/multihost.md.");
  add_common(cmd, o->common);
  add_host_by_host(cmd, o->common);
  add_steady_state_options(cmd, o->steady);
  cmd->add_option("--by", o->by, "Frames: Python source stack, JAX op path, or module")
      ->check(CLI::IsMember({"source", "op-name", "module"}))
      ->capture_default_str();
  cmd->add_option("--device", o->device,
                  "Only devices whose name contains this (or matches re:REGEX)");
  cmd->add_option("-o,--svg", o->svg, "Write an interactive SVG flamegraph here ('-' = stdout)");
  cmd->add_option("--folded", o->folded,
                  "Write folded stacks ('frame;frame weight_ps' lines) here ('-' = stdout)");
  cmd->add_option("--speedscope", o->speedscope,
                  "Write a speedscope JSON profile here ('-' = stdout)");
  cmd->add_flag("--idle", o->idle,
                "Add idle frames ([idle during modules], [idle between modules]): a device then "
                "weighs its span, not its busy time");
  // The default since idle frames went out by default; still accepted.
  cmd->add_flag("--no-idle", o->no_idle, "")->group("");
  cmd->add_option("--title", o->title, "SVG title (default: the profile path)");
  cmd->add_option("--top", o->top, "Stacks per device in the table (0 = all)")
      ->capture_default_str();
  return [o]() {
    FlameOptions options;
    parse_flame_by(o->by, options.by);
    options.device = o->device;
    if (o->idle && o->no_idle) throw InputError("", "--idle and --no-idle contradict each other");
    options.idle = o->idle;
    options.steady = o->steady;
    PartialExtractOptions extract;
    extract.parts = kPartFlame | kPartExecutions;
    if (options.idle) extract.parts |= kPartCompileTotals;
    extract.steady = o->steady;
    extract.flame_bys = static_cast<uint8_t>(1u << static_cast<uint32_t>(options.by));
    LoadedPartials loaded;
    load_set(o->common, extract, loaded);
    FlameTree tree = flame_from_partials(loaded.set, options);
    if (options.idle) {
      CompileResult compiles =
          compile_from_partials(loaded.set, {.top_steps = 1, .totals_only = true});
      say_set_apart(loaded.set, options.steady, &compiles,
                    format_of(o->common) == OutputFormat::kJson);
    } else {
      say_set_apart(loaded.set, options.steady, nullptr,
                    format_of(o->common) == OutputFormat::kJson);
    }
    warn(tree.warnings);
    bool files = !o->svg.empty() || !o->folded.empty() || !o->speedscope.empty();
    if (!o->svg.empty()) {
      FlameSvgOptions svg;
      svg.title = o->title.empty() ? "jaxprof flame: " + o->common.paths.front() : o->title;
      write_output(o->svg, render_flame_svg(tree, svg), "interactive SVG flamegraph",
                   "  open it in a web browser (hover for times, click a frame to zoom)\n");
    }
    if (!o->folded.empty())
      write_output(o->folded, render_flame_folded(tree), "folded stacks (weights in ps)",
                   "  feed it to flamegraph.pl or inferno-flamegraph\n");
    if (!o->speedscope.empty())
      write_output(o->speedscope, render_flame_speedscope(tree), "speedscope profile",
                   "  open https://www.speedscope.app and drop the file on it\n");
    if (!files) write(render_flame(tree, format_of(o->common), o->top));
    return 0;
  };
});

}  // namespace
}  // namespace jaxprof::cli
