// The sessions of a log directory (io/session_list.h), for jaxprof.sessions() and XAX's
// view_profile: the CLI's JSON (`jaxprof sessions --format json`), and copying one out. And the
// viewer jaxprof.view(ui=...) starts on a capture's log directory (io/viewer_command.h).
#include "_core.h"

#include "jaxprof/io/session_list.h"
#include "jaxprof/io/viewer_command.h"
#include "jaxprof/render/text/sessions_render.h"

namespace jaxprof::python {

void bind_sessions(nb::module_& m) {
  m.def(
      "sessions_json",
      [](const std::string& log_dir) {
        std::vector<SessionInfo> sessions = list_sessions(log_dir);
        return render_sessions(sessions, log_dir, OutputFormat::kJson);
      },
      nb::arg("log_dir"), nb::call_guard<nb::gil_scoped_release>());
  m.def(
      "extract_session",
      [](const std::string& log_dir, const std::string& session, const std::string& dest) {
        std::vector<SessionInfo> sessions = list_sessions(log_dir);
        return extract_session(find_session(sessions, session, log_dir), dest);
      },
      nb::arg("log_dir"), nb::arg("session"), nb::arg("dest"),
      nb::call_guard<nb::gil_scoped_release>());
  // (argv, log_dir, url, the message when it is not installed), as `jaxprof view --ui` has them.
  m.def(
      "viewer_command",
      [](const std::string& ui, const std::string& path, const std::string& session, int port) {
        ViewerLaunch v = viewer_launch(ui, path, session, port);
        return std::make_tuple(v.argv, v.log_dir, v.url,
                               not_installed_message(v, "ui='perfetto' (the default)"));
      },
      nb::arg("ui"), nb::arg("path"), nb::arg("session"), nb::arg("port"));
}

}  // namespace jaxprof::python
