#include "jaxprof/io/viewer_command.h"

#include <unistd.h>

#include <filesystem>
#include <system_error>

#include "jaxprof/common/error.h"
#include "jaxprof/io/discover.h"

namespace fs = std::filesystem;

namespace jaxprof {

ViewerLaunch viewer_launch(const std::string& ui, const std::string& path,
                           const std::string& session, int port) {
  ViewerLaunch v;
  v.ui = ui;
  if (ui == "tensorboard") {
    v.port = port ? port : 6006;
    v.install = "pip install tensorboard xprof   (xprof provides TensorBoard's Profile tab)";
  } else if (ui == "xprof") {
    v.port = port ? port : 8791;
    v.install = "pip install xprof";
  } else {
    throw InputError("", "--ui " + ui + ": expected perfetto, tensorboard or xprof");
  }
  ProfileFiles files = discover_profile(path, {.session = session, .hosts = {}});
  fs::path dir = !files.session_dir.empty()   ? fs::path(files.session_dir)
                 : files.hosts.empty()        ? fs::path(path)
                                              : fs::path(files.hosts.front().path).parent_path();
  dir = fs::absolute(dir).lexically_normal();
  if (dir.filename().empty()) dir = dir.parent_path();
  fs::path profile = dir.parent_path();
  if (profile.filename() != "profile" || profile.parent_path().filename() != "plugins")
    throw InputError(dir.string(),
                     "is not in the layout " + ui +
                         " reads (<logdir>/plugins/profile/<session>/*.xplane.pb); use --ui "
                         "perfetto, or move the files there");
  v.log_dir = profile.parent_path().parent_path().string();
  if (ui == "tensorboard")
    v.argv = {"tensorboard", "--logdir", v.log_dir, "--port", std::to_string(v.port)};
  else
    v.argv = {"xprof", "server", "--logdir", v.log_dir, "--port", std::to_string(v.port)};
  v.url = "http://localhost:" + std::to_string(v.port) + "/";
  return v;
}

std::string find_on_path(const std::string& program, const std::string& path_env) {
  size_t begin = 0;
  while (begin <= path_env.size()) {
    size_t end = path_env.find(':', begin);
    if (end == std::string::npos) end = path_env.size();
    std::string dir = path_env.substr(begin, end - begin);
    fs::path candidate = fs::path(dir.empty() ? "." : dir) / program;
    std::error_code ec;
    if (fs::is_regular_file(candidate, ec) && ::access(candidate.c_str(), X_OK) == 0)
      return candidate.string();
    begin = end + 1;
  }
  return {};
}

std::string not_installed_message(const ViewerLaunch& v, const std::string& perfetto_hint) {
  return v.ui + " is not installed (no `" + v.argv.front() + "` on PATH); install it with: " +
         v.install + "\nor use " + perfetto_hint + ", which needs nothing installed";
}

std::string shell_command(const std::vector<std::string>& argv) {
  std::string out;
  for (const std::string& a : argv) {
    bool plain = !a.empty() && a.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRS"
                                                   "TUVWXYZ0123456789_-./:=@%+,") ==
                                   std::string::npos;
    std::string quoted = "'";
    for (char c : a) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    out += (out.empty() ? "" : " ") + (plain ? a : quoted + "'");
  }
  return out;
}

}  // namespace jaxprof
