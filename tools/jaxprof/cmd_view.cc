// jaxprof view: writes a Perfetto-loadable trace (the `export --perfetto` code) into the current
// directory, says how to open it in Perfetto UI and XProf/TensorBoard, and can serve it to
// ui.perfetto.dev from 127.0.0.1 for a bounded time.
#include <arpa/inet.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>

#include "cli_common.h"
#include "jaxprof/common/error.h"
#include "jaxprof/io/viewer_command.h"
#include "jaxprof/render/perfetto/perfetto.h"
#include "window_options.h"

namespace jaxprof::cli {
namespace {

namespace fs = std::filesystem;

// "<stem>.perfetto.json.gz" in the current directory, never inside the capture: a run directory
// is the capture's own folder, and an nsys-jax archive's members are not files. The stem is the
// host file's ("vm.xplane.pb" -> "vm", "run_proc0.zip" -> "run_proc0"), else the session's.
fs::path default_output(const LoadedProfile& loaded) {
  const ProfileFiles& f = loaded.files;
  std::string stem = "jaxprof";
  if (f.hosts.size() == 1)
    stem = host_from_file_name(fs::path(f.hosts.front().path).filename().string());
  else if (!f.session.empty())
    stem = f.session;
  if (stem.empty() || stem == "." || stem == "..") stem = "jaxprof";
  return fs::path(stem + ".perfetto.json.gz");
}

// The log directory XProf and TensorBoard take: the parent of plugins/profile/<session>/, when
// the capture sits in that layout.
std::string log_dir_of(const fs::path& capture_dir, bool& layout) {
  fs::path dir = fs::absolute(capture_dir).lexically_normal();
  if (dir.filename().empty()) dir = dir.parent_path();
  fs::path profile = dir.parent_path();
  layout = profile.filename() == "profile" && profile.parent_path().filename() == "plugins";
  return (layout ? profile.parent_path().parent_path() : dir).string();
}

std::string perfetto_url(uint16_t port, const std::string& name) {
  return fmt::format("https://ui.perfetto.dev/#!/?url=http://127.0.0.1:{}/{}", port, name);
}

void send_all(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // the client went away
    data.remove_prefix(static_cast<size_t>(n));
  }
}

// Answers one request on `fd`; true when it was a complete GET of the trace.
bool answer(int fd, const std::string& name, const std::string& body) {
  timeval tv{5, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  std::string request;
  char buf[4096];
  while (request.find("\r\n\r\n") == std::string::npos && request.size() < 16384) {
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    request.append(buf, static_cast<size_t>(n));
  }
  std::string_view line(request);
  line = line.substr(0, line.find("\r\n"));
  std::string_view method = line.substr(0, line.find(' '));
  std::string_view target;
  if (size_t sp = line.find(' '); sp != std::string_view::npos) {
    target = line.substr(sp + 1);
    target = target.substr(0, target.find(' '));
    target = target.substr(0, target.find('?'));
  }
  // ui.perfetto.dev fetches the trace cross-origin.
  const std::string cors =
      "Access-Control-Allow-Origin: https://ui.perfetto.dev\r\n"
      "Access-Control-Allow-Methods: GET, HEAD, OPTIONS\r\n"
      "Access-Control-Allow-Headers: *\r\n"
      "Access-Control-Allow-Private-Network: true\r\n"
      "Connection: close\r\n";
  if (method == "OPTIONS") {
    send_all(fd, "HTTP/1.1 204 No Content\r\n" + cors + "Content-Length: 0\r\n\r\n");
    return false;
  }
  bool ours = target == "/" + name;
  if ((method != "GET" && method != "HEAD") || !ours) {
    std::string msg = ours ? "method not allowed\n" : "not found\n";
    send_all(fd,
             fmt::format("HTTP/1.1 {}\r\n{}Content-Type: text/plain\r\nContent-Length: "
                         "{}\r\n\r\n{}",
                         ours ? "405 Method Not Allowed" : "404 Not Found", cors, msg.size(), msg));
    return false;
  }
  send_all(fd, fmt::format("HTTP/1.1 200 OK\r\n{}Content-Type: application/octet-stream\r\n"
                           "Cache-Control: no-store\r\nContent-Length: {}\r\n\r\n",
                           cors, body.size()));
  if (method == "HEAD") return false;
  send_all(fd, body);
  return true;
}

// Serves `file` on 127.0.0.1:port until it has been downloaded once (unless `keep`) or
// `seconds` have passed.
void serve(const fs::path& file, uint16_t port, double seconds, bool keep) {
  std::ifstream in(file, std::ios::binary);
  std::string body((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!in && !in.eof()) throw InputError(file.string(), "cannot read the trace back");
  std::string name = file.filename().string();

  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw InputError("", fmt::format("cannot open a socket: {}", std::strerror(errno)));
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);  // loopback only, never other interfaces
  socklen_t len = sizeof addr;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd, 8) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    std::string why = std::strerror(errno);
    ::close(fd);
    throw InputError("", fmt::format("cannot serve on 127.0.0.1:{}: {}", port, why));
  }
  uint16_t bound = ntohs(addr.sin_port);
  write(
      fmt::format("serving {} on http://127.0.0.1:{}/{} (127.0.0.1 only) for at most {:g} s{}\n"
                  "open: {}\n",
                  file.string(), bound, name, seconds, keep ? "" : ", until it is downloaded once",
                  perfetto_url(bound, name)));
  if (bound != 9001)
    write(
        "note: ui.perfetto.dev only fetches ?url= traces from 127.0.0.1:9001; on another port "
        "download the file and use \"Open trace file\"\n");
  std::fflush(stdout);

  using Clock = std::chrono::steady_clock;
  auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                     std::chrono::duration<double>(seconds));
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) {
      write("stopped serving: time is up\n");
      break;
    }
    pollfd p{fd, POLLIN, 0};
    int r = ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left.count(), 1000)));
    if (r < 0 && errno != EINTR) break;
    if (r <= 0) continue;
    int client = ::accept4(fd, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0) continue;
    bool served = answer(client, name, body);
    ::shutdown(client, SHUT_WR);
    ::close(client);
    if (served && !keep) {
      write("stopped serving: the trace was downloaded\n");
      break;
    }
  }
  ::close(fd);
}

// --ui tensorboard|xprof: that viewer, started on the capture's log directory in place of this
// process (or its command line, with --print-command).
int start_viewer(const std::string& ui, const CommonOptions& common, int port, bool print_only) {
  ViewerLaunch v = viewer_launch(ui, common.paths.front(), common.session, port);
  if (print_only) {
    write(shell_command(v.argv) + "\n");
    return 0;
  }
  const char* path_env = std::getenv("PATH");
  std::string exe = find_on_path(v.argv.front(), path_env ? path_env : "");
  if (exe.empty()) {
    std::fprintf(stderr, "jaxprof: %s\n",
                 not_installed_message(v, "--ui perfetto (the default)").c_str());
    return kExitBadInput;
  }
  write(fmt::format("starting {} on {}: {}\nopen {} (Ctrl-C stops it)\n", ui, v.log_dir,
                    shell_command(v.argv), v.url));
  std::fflush(stdout);
  std::vector<char*> argv;
  for (std::string& a : v.argv) argv.push_back(a.data());
  argv.push_back(nullptr);
  ::execv(exe.c_str(), argv.data());
  throw InputError(exe, fmt::format("cannot start: {}", std::strerror(errno)));
}

RegisterCommand view_command(95, [](CLI::App& app) -> std::function<int()> {
  struct Options {
    CommonOptions common;
    std::string output;
    bool serve = false;
    bool keep = false;
    uint16_t port = 9001;
    double serve_for = 300;
    WindowFlags window;
    std::string ui = "perfetto";
    bool print_command = false;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = app.add_subcommand(
      "view",
      "Write a Perfetto trace (in the current directory) and say how to open it (or serve it)");
  cmd->footer(
      "The trace is what `jaxprof export --perfetto` writes. --serve answers on 127.0.0.1 only,\n"
      "with CORS for ui.perfetto.dev, and stops once the trace was downloaded (or after\n"
      "--serve-for seconds). --steps and --time write a window of it, as `export` does.\n"
      "--ui tensorboard runs `tensorboard --logdir LOGDIR --port 6006` and --ui xprof runs\n"
      "`xprof server --logdir LOGDIR --port 8791` (--port overrides) on the capture's log\n"
      "directory, the one above plugins/profile/<session>/, when installed (else: how to\n"
      "install it, exit 2). See docs/cli.md.");
  add_common(cmd, o->common, /*formats=*/{});
  cmd->add_option("-o,--output", o->output,
                  "Trace file (default: <host or session>.perfetto.json.gz in the current "
                  "directory; never inside the capture unless given here)");
  cmd->add_flag("--serve", o->serve, "Serve the trace to ui.perfetto.dev from 127.0.0.1");
  cmd->add_option("--port", o->port, "Port for --serve (ui.perfetto.dev accepts 9001; 0 = any)")
      ->capture_default_str();
  cmd->add_option("--serve-for", o->serve_for, "Stop serving after this many seconds")
      ->check(CLI::Range(0.0, 86400.0))
      ->capture_default_str();
  cmd->add_flag("--keep-serving", o->keep,
                "Keep serving after the first download (until --serve-for)");
  add_window_options(cmd, o->window);
  cmd->add_option("--ui", o->ui,
                  "perfetto: write the trace (and serve it with --serve); tensorboard or xprof: "
                  "start that viewer on the log directory")
      ->check(CLI::IsMember({"perfetto", "tensorboard", "xprof"}))
      ->capture_default_str();
  cmd->add_flag("--print-command", o->print_command,
                "With --ui tensorboard|xprof: print the command line, start nothing");
  auto* port_option = cmd->get_option("--port");
  return [o, port_option]() {
    if (o->ui != "perfetto")
      return start_viewer(o->ui, o->common, port_option->count() ? o->port : 0, o->print_command);
    if (o->print_command)
      throw InputError("", "--print-command goes with --ui tensorboard or --ui xprof");
    LoadedProfile loaded;
    load(o->common, loaded, /*release_counted=*/true);  // as export: lines read one at a time
    fs::path out = o->output.empty() ? default_output(loaded) : fs::path(o->output);
    std::optional<TraceWindow> window = resolve_window(o->window, loaded.profile);
    bool proto = trace_format_of(out.string(), TraceFormat::kAuto) == TraceFormat::kProto;
    warn_if_too_big(o->window, loaded.profile, proto, window);
    WindowCounts counts;
    PerfettoSummary s =
        write_trace(loaded.profile, out.string(), TraceFormat::kAuto, window, counts, o->window);
    warn(loaded.profile.warnings);
    const ProfileFiles& files = loaded.files;
    std::string capture_dir = !files.session_dir.empty() ? files.session_dir
                              : files.hosts.empty()
                                  ? "."
                                  : fs::path(files.hosts.front().path).parent_path().string();
    bool layout = false;
    std::string log_dir = log_dir_of(capture_dir.empty() ? "." : capture_dir, layout);
    std::string name = out.filename().string();
    std::string text = fmt::format(
        "wrote {}: {} devices, {} op events, {} category segments, {} module executions\n\n"
        "Perfetto UI:  open https://ui.perfetto.dev, click \"Open trace file\", pick {}\n"
        "              (or `jaxprof view {} --serve` and open {})\n"
        "XProf:        xprof server --logdir {} --port 8791   then http://localhost:8791\n"
        "TensorBoard:  tensorboard --logdir {}   then the Profile tab\n",
        out.string(), s.devices, s.op_events, s.segments, s.executions, out.string(),
        o->common.paths.front(), perfetto_url(9001, name), log_dir, log_dir);
    if (!layout)
      text += fmt::format(
          "              (XProf and TensorBoard read "
          "<logdir>/plugins/profile/<session>/*.xplane.pb;"
          " {} is not in that layout)\n",
          capture_dir.empty() ? "." : capture_dir);
    write(text);
    if (o->serve) {
      std::fflush(stdout);
      serve(out, o->port, o->serve_for, o->keep);
    }
    return 0;
  };
});

}  // namespace
}  // namespace jaxprof::cli
