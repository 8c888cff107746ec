// jaxprof report: every analysis in one self-contained HTML file.
#include <filesystem>

#include "cli_common.h"
#include "jaxprof/common/error.h"
#include "jaxprof/render/html/html_report.h"
#include "jaxprof/render/html/html_report_partials.h"

namespace jaxprof::cli {
namespace {

// "prof.xplane.pb.gz" -> "prof", a run or log directory -> its last component.
std::string profile_stem(const std::string& path) {
  std::filesystem::path p(path);
  while (!p.empty() && !p.has_filename()) p = p.parent_path();
  std::string name = p.filename().string();
  for (const char* suffix : {".gz", ".pb", ".xplane", ".partial"})
    if (name.size() > std::string_view(suffix).size() && name.ends_with(suffix))
      name.resize(name.size() - std::string_view(suffix).size());
  return name.empty() || name == "." || name == ".." ? "profile" : name;
}

RegisterCommand report_command(90, [](CLI::App& app) -> std::function<int()> {
  struct Options {
    CommonOptions common;
    std::string output, title;
    size_t top = 50;
    SteadyStateOptions steady;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = app.add_subcommand(
      "report",
      "Write one self-contained HTML report: summary, device time, step times, critical path, "
      "modules, ops, flamegraphs, roofline, collectives, kernels, compile phases, memory");
  cmd->footer(
      "Default output: <profile stem>.report.html in the current directory. Partial files\n"
      "(jaxprof partial), alone or with profiles, give every section but the roofline, memory\n"
      "and critical path, which need the profiles' events (those sections say so); so does\n"
      "--keep-going.\n"
      "See docs/report.md"
      " and docs/multihost.md.");
  add_common(cmd, o->common, /*formats=*/{});  // always HTML
  add_host_by_host(cmd, o->common);
  cmd->add_option("-o,--output", o->output, "HTML file to write");
  cmd->add_option("--title", o->title, "Page title (default: jaxprof report: <profile>)");
  cmd->add_option("--top", o->top, "Rows per table")->capture_default_str();
  add_steady_state_options(cmd, o->steady);
  return [o]() {
    HtmlReportOptions options;
    options.source = o->common.paths.front();
    options.title = o->title.empty() ? "jaxprof report: " + profile_stem(options.source) : o->title;
    options.top = o->top;
    options.steady = o->steady;
    std::string html;
    // --keep-going reads the hosts one by one too, so that a damaged host is left out.
    bool partials = o->common.keep_going;
    for (const std::string& p : o->common.paths) partials = partials || names_partials({p});
    if (partials) {
      // Host by host into partials: the roofline and memory sections need the events.
      LoadedPartials loaded;
      load_set(o->common, html_report_extract(o->steady), loaded);
      html = render_html_report(html_report_data_from_partials(loaded.set, o->steady), options);
    } else {
      LoadedProfile loaded;
      load(o->common, loaded);
      html = render_html_report(loaded.profile, options);
      warn(loaded.profile.warnings);
    }
    std::string out = o->output.empty() ? profile_stem(options.source) + ".report.html" : o->output;
    write_file(out, html, "HTML report",
               "  open it in a web browser (one self-contained file: it can be mailed or "
               "attached)\n");
    return 0;
  };
});

}  // namespace
}  // namespace jaxprof::cli
