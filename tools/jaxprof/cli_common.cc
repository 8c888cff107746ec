#include "cli_common.h"

#include <fmt/format.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "jaxprof/analysis/parallel_parts.h"
#include "jaxprof/error.h"
#include "jaxprof/render/units.h"

namespace jaxprof::cli {

std::vector<CommandRegistration>& registered_commands() {
  static std::vector<CommandRegistration> commands;
  return commands;
}

void add_common(CLI::App* cmd, CommonOptions& o, const std::vector<std::string>& formats) {
  cmd->add_option("path", o.paths,
                  "Profile: a *.xplane.pb[.gz] file, a run directory (plugins/profile/<session>/), "
                  "or a TensorBoard log directory; several *.xplane.pb files load as one "
                  "multi-host profile; *.hlo.pb / *.hlo_proto.pb files add HLO metadata")
      ->required();
  cmd->add_option("--session", o.session, "Session to read from a log directory (default: newest)");
  cmd->add_option("--host", o.hosts, "Only these hosts (repeat or comma-separate)")->delimiter(',');
  if (!formats.empty()) {
    o.format = formats.front();
    std::string list;
    for (const std::string& f : formats) list += (list.empty() ? "" : ", ") + f;
    cmd->add_option("--format", o.format, "Output format: " + list)
        ->check(CLI::IsMember(formats))
        ->capture_default_str();
    if (std::find(formats.begin(), formats.end(), "table") != formats.end()) add_wide_option(cmd);
  }
  add_threads_option(cmd, o.threads);
}

void add_wide_option(CLI::App* cmd) {
  cmd->add_flag_callback(
      "--wide", [] { set_table_layout({.wide = true, .line_width = 0}); },
      "Tables: never cut names (default: long names are cut to what tells them apart, and "
      "tables fit the terminal)");
}

void add_threads_option(CLI::App* cmd, unsigned& threads) {
  cmd->add_option("--threads", threads,
                  "Threads that decode and analyse (default: one per core; the result is the same "
                  "for any number)");
}

void write(const std::string& s) {
  if (std::fwrite(s.data(), 1, s.size(), stdout) != s.size() || std::fflush(stdout) != 0) {
    // Nothing to do: the reader went away.
  }
}

void write_file(const std::string& path, const std::string& content, const std::string& what,
                const std::string& next) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(content.data(), static_cast<std::streamsize>(content.size()));
  f.close();
  if (!f) throw InputError(path, "cannot write the " + what);
  announce_written(path, what, next);
}

void announce_written(const std::string& path, const std::string& what, const std::string& next) {
  std::error_code ec;
  auto size = std::filesystem::file_size(path, ec);
  std::string bytes = ec ? "" : " (" + human_bytes(static_cast<double>(size)) + ")";
  std::fprintf(stderr, "jaxprof: wrote %s%s: %s\n", path.c_str(), bytes.c_str(), what.c_str());
  if (!next.empty()) std::fprintf(stderr, "%s", next.c_str());
}

size_t terminal_width() {
  if (!stdout_is_terminal()) return 0;
  winsize ws{};
  if (::ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  if (const char* columns = std::getenv("COLUMNS")) {
    long n = std::strtol(columns, nullptr, 10);
    if (n > 0) return static_cast<size_t>(n);
  }
  return 80;
}

bool stdout_is_terminal() {
  static const bool terminal = ::isatty(STDOUT_FILENO) == 1;
  return terminal;
}

size_t top_for(const CLI::Option* top_option, size_t given, OutputFormat format,
               size_t terminal_default) {
  if (top_option && top_option->count() > 0) return given;
  return format == OutputFormat::kTable && stdout_is_terminal() ? terminal_default : given;
}

void add_host_by_host(CLI::App* cmd, CommonOptions& o) {
  cmd->add_flag("--keep-going", o.keep_going,
                "Skip a host whose file cannot be read (reported on stderr) instead of stopping");
}

void load_set(const CommonOptions& o, const PartialExtractOptions& extract, LoadedPartials& out) {
  PartialLoadOptions lo;
  lo.session = o.session;
  lo.hosts = o.hosts;
  lo.extract = extract;
  lo.import.threads = o.threads;
  lo.keep_going = o.keep_going;
  analysis_threads.store({.threads = o.threads});
  const bool tty = isatty(fileno(stderr));
  bool shown = false;
  if (tty)
    lo.progress = [&shown](const PartialLoadProgress& p) {
      if (p.total < 2) return;
      std::fprintf(stderr, "\rjaxprof: %zu/%zu hosts, %.0f MB/s ", p.done, p.total,
                   p.seconds > 0 ? static_cast<double>(p.bytes) / 1e6 / p.seconds : 0.0);
      shown = true;
    };
  load_partials(o.paths, lo, out);
  if (shown) std::fprintf(stderr, "\r\033[K");
  for (const HostPartial& h : out.set.hosts()) warn(h.warnings);
  for (const SkippedHost& s : out.skipped)
    std::fprintf(stderr, "jaxprof: skipped host %s: %s\n", s.host.c_str(), s.reason.c_str());
  if (!out.skipped.empty())
    std::fprintf(stderr, "jaxprof: read %zu hosts, skipped %zu\n", out.hosts_read,
                 out.skipped.size());
}

void load_set(const CommonOptions& o, uint32_t parts, LoadedPartials& out) {
  PartialExtractOptions extract;
  extract.parts = parts;
  load_set(o, extract, out);
}

void refuse_partials(const CommonOptions& o, std::string_view command) {
  for (const std::string& p : o.paths)
    if (names_partials({p}))
      throw InputError(p, fmt::format("{} reads the events, which a partial summary does not "
                                      "keep: give the profile",
                                      command));
}

void load(const CommonOptions& o, LoadedProfile& out, bool release_counted) {
  refuse_partials(o, "this command");
  LoadOptions lo;
  lo.session = o.session;
  lo.hosts = o.hosts;
  lo.import.threads = o.threads;
  lo.import.release_counted = release_counted;
  analysis_threads.store({.threads = o.threads});
  load_profile(o.paths, lo, out);
}

OutputFormat format_of(const CommonOptions& o) {
  OutputFormat f = OutputFormat::kTable;
  parse_output_format(o.format, f);
  return f;
}

void warn(const std::vector<std::string>& warnings) {
  for (const auto& w : warnings) std::fprintf(stderr, "jaxprof: warning: %s\n", w.c_str());
}

}  // namespace jaxprof::cli
