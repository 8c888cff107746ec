// jaxprof sessions: the sessions (captures) of a log directory with their hosts, file sizes and
// times, and --extract to copy one session's raw files out.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli_common.h"
#include "jaxprof/common/error.h"
#include "jaxprof/common/units.h"
#include "jaxprof/io/session_list.h"
#include "jaxprof/render/text/sessions_render.h"

namespace jaxprof::cli {
namespace {

RegisterCommand sessions_command(97, [](CLI::App& app) -> std::function<int()> {
  struct Options {
    std::string log_dir, session, extract, format = "table";
  };
  auto o = std::make_shared<Options>();
  auto* cmd = app.add_subcommand(
      "sessions", "List the sessions of a log directory (newest first) with their hosts, file "
                  "sizes and times; --extract copies one out");
  cmd->footer(
      "A session is a directory at or under LOGDIR holding profile files (*.xplane.pb[.gz],\n"
      "*.trace.json[.gz]): <logdir>/plugins/profile/<session>/, XAX's\n"
      "<logdir>/<name>_step_<N>/plugins/profile/<session>/, or a session directory itself.\n"
      "--session names one by its path under LOGDIR, its directory's name, its first folder\n"
      "(XAX's <name>_step_<N>) or the end of its directory's name. See docs/cli.md.");
  cmd->add_option("LOGDIR", o->log_dir, "The log directory (or any folder holding captures)")
      ->required();
  cmd->add_option("--session", o->session,
                  "Only this session (with --extract: the one copied; default the newest)");
  cmd->add_option("--extract", o->extract,
                  "Copy the session's raw files into DIR/<session directory>/ (made as needed; "
                  "never over files already there)");
  cmd->add_option("--format", o->format, "table, json or csv")
      ->check(CLI::IsMember(kAllFormats))
      ->capture_default_str();
  return [o]() {
    std::vector<SessionInfo> sessions = list_sessions(o->log_dir);
    if (!o->extract.empty()) {
      const SessionInfo& s = find_session(sessions, o->session, o->log_dir);
      std::string target = extract_session(s, o->extract);
      write(fmt::format("copied session {} ({} file{}, {}, hosts: {}) to {}\n", s.name,
                        s.files.size(), s.files.size() == 1 ? "" : "s",
                        human_bytes(static_cast<double>(s.bytes)),
                        s.hosts.empty() ? std::string("none") : fmt::format("{}", fmt::join(s.hosts, ", ")),
                        target));
      return 0;
    }
    if (sessions.empty())
      throw InputError(o->log_dir,
                       "no sessions (no *.xplane.pb or *.trace.json[.gz] files) under it");
    if (!o->session.empty()) sessions = {find_session(sessions, o->session, o->log_dir)};
    OutputFormat format = OutputFormat::kTable;
    parse_output_format(o->format, format);
    write(render_sessions(sessions, o->log_dir, format));
    return 0;
  };
});

}  // namespace
}  // namespace jaxprof::cli
