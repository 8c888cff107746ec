// jaxprof report: every analysis in one self-contained HTML file.
#include <filesystem>
#include <optional>

#include "cli_common.h"
#include "jaxprof/common/error.h"
#include "jaxprof/render/html/html_report.h"
#include "jaxprof/render/html/html_report_data.h"
#include "jaxprof/render/html/html_report_hosts.h"
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
    bool together = false;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = app.add_subcommand(
      "report",
      "Write one self-contained HTML report: summary, device time, step times, critical path, "
      "modules, ops, flamegraphs, roofline, collectives, kernels, compile phases, memory");
  cmd->footer(
      "Default output: <profile stem>.report.html in the current directory. Several hosts are\n"
      "read one by one, each host's roofline and memory worked out while it is read; the\n"
      "critical path, which needs every host's events together, is left to `jaxprof\n"
      "critical-path`, or to --together. Partial files (jaxprof partial), alone or with\n"
      "profiles, give every section but the roofline, memory and critical path (those\n"
      "sections say so).\n"
      "See docs/report.md"
      " and docs/multihost.md.");
  add_common(cmd, o->common, /*formats=*/{});  // always HTML
  add_host_by_host(cmd, o->common);
  cmd->add_option("-o,--output", o->output, "HTML file to write");
  cmd->add_option("--title", o->title, "Page title (default: jaxprof report: <profile>)");
  cmd->add_option("--top", o->top, "Rows per table")->capture_default_str();
  add_steady_state_options(cmd, o->steady);
  cmd->add_flag("--together", o->together,
                "Read every host into one profile, so that the critical path follows the steps "
                "across the hosts (peak memory grows with the hosts)");
  return [o]() {
    HtmlReportOptions options;
    options.source = o->common.paths.front();
    options.title = o->title.empty() ? "jaxprof report: " + profile_stem(options.source) : o->title;
    options.top = o->top;
    options.steady = o->steady;
    std::string html;
    bool partials = false;
    for (const std::string& p : o->common.paths) partials = partials || names_partials({p});
    LoadedPartials loaded;
    if (o->together) {
      refuse_partials(o->common, "report --together");
      LoadedProfile whole;
      load(o->common, whole);
      html = render_html_report(whole.profile, options);
      warn(whole.profile.warnings);
    } else if (partials) {
      // The roofline, memory and critical path sections need the events.
      load_set(o->common, html_report_extract(o->steady), loaded);
      html = render_html_report(html_report_data_from_partials(loaded.set, o->steady), options);
    } else {
      // Host by host into partials; what needs the events is worked out from each profile
      // before it is dropped: the whole of it when the input is one profile, and the roofline
      // and memory of each host when there are several (html_report_hosts.h).
      std::optional<HtmlReportData> events;
      HtmlReportHosts hosts(o->top);
      load_set(
          o->common, html_report_extract(o->steady), loaded,
          [&](const Profile& profile) { html_report_event_sections(profile, events.emplace()); },
          [&](size_t host, const Profile& profile) { hosts.add(host, profile); });
      HtmlReportData d = html_report_data_from_partials(loaded.set, o->steady);
      if (events) {
        d.roofline = std::move(events->roofline);
        d.memory = std::move(events->memory);
        d.critical_path = std::move(events->critical_path);
        d.missing_critical_path = std::move(events->missing_critical_path);
      } else {
        hosts.finish(d);
      }
      html = render_html_report(d, options);
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
