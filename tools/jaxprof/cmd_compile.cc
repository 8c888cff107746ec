// jaxprof compile: compile time seen in the profile.
#include "cli_common.h"
#include "jaxprof/analysis/compile/compile.h"
#include "jaxprof/render/text/compile_render.h"

namespace jaxprof::cli {
namespace {

RegisterCommand compile_command(30, [](CLI::App& app) -> std::function<int()> {
  struct Options {
    CommonOptions common;
    size_t top_steps = 0, top = 0;
    bool passes_only = false;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = app.add_subcommand(
      "compile", "Compile time per compile, module and phase (trace, lower, HLO passes, codegen)");
  cmd->footer(
      "One compile per jit cache miss: JAX's trace/lower/backend_compile stages on the launching\n"
      "thread, with XLA's work on compiler threads attributed by time. Phase wall times add up\n"
      "to the compile's wall time exactly. See docs/compile.md.");
  add_common(cmd, o->common);
  add_host_by_host(cmd, o->common);
  cmd->add_option("--top-steps", o->top_steps,
                  "Keep the N largest steps (event names) per compile in JSON/CSV (0 = all)");
  auto* top = cmd->add_option(
      "--top", o->top,
      "Table: list the N modules with the most compile time and detail the N longest compiles "
      "(0 = all; default: all, or 5 on a terminal)");
  cmd->add_flag("--passes-only", o->passes_only,
                "Steps are HLO passes alone (no module or program id in their names), with totals "
                "per pass over every compile");
  return [o, top]() {
    LoadedPartials loaded;
    load_set(o->common, kPartCompile, loaded);
    CompileOptions options;
    options.top_steps = o->top_steps;
    options.passes_only = o->passes_only;
    CompileResult r = compile_from_partials(loaded.set, options);
    write(render_compile(r, format_of(o->common), top_for(top, o->top, format_of(o->common), 5)));
    return 0;
  };
});

}  // namespace
}  // namespace jaxprof::cli
