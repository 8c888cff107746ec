// The viewers `jaxprof view --ui` and `jaxprof.view(ui=...)` start on a capture's log
// directory: TensorBoard (`tensorboard --logdir DIR --port 6006`, its Profile tab from the
// xprof package) and XProf (`xprof server --logdir DIR --port 8791`, the CLI of xprof 2.x).
// Both read `<logdir>/plugins/profile/<session>/`; this finds that directory for a path given
// as every command takes it, says the command line, and how to install the viewer.
#pragma once

#include <string>
#include <vector>

namespace jaxprof {

struct ViewerLaunch {
  std::string ui;                 // "tensorboard" or "xprof"
  std::vector<std::string> argv;  // argv[0] is the program's name, to look up on PATH
  std::string log_dir;
  int port = 0;
  std::string url;      // where the viewer answers once started
  std::string install;  // the pip command that installs it
};

// The viewer on the log directory of `path` (a profile file, run directory or log directory;
// `session` as --session takes it). `port` 0: the viewer's own default. Throws InputError for
// an unknown ui, or when the capture is not in the plugins/profile/<session>/ layout both read.
ViewerLaunch viewer_launch(const std::string& ui, const std::string& path,
                           const std::string& session, int port);

// The program's path on `path_env` (a PATH value), empty when it is not there.
std::string find_on_path(const std::string& program, const std::string& path_env);

// "tensorboard is not installed (no `tensorboard` on PATH): pip install ...; or use --ui
// perfetto, which needs nothing installed".
std::string not_installed_message(const ViewerLaunch& launch, const std::string& perfetto_hint);

// The command line as a shell reads it (arguments quoted where needed).
std::string shell_command(const std::vector<std::string>& argv);

}  // namespace jaxprof
