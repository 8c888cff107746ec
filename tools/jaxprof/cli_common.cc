#include "cli_common.h"

#include <fmt/format.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "jaxprof/analysis/partial/extract_partials.h"
#include "jaxprof/common/error.h"
#include "jaxprof/common/parallel_parts.h"
#include "jaxprof/common/units.h"
#include "jaxprof/common/warning_kind.h"
#include "jaxprof/render/text/input_render.h"
#include "jaxprof/render/text/steady_state_render.h"

namespace jaxprof::cli {

namespace {
// --verbose: every warning its own line.
bool& verbose_warnings() {
  static bool verbose = false;
  return verbose;
}
}  // namespace

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
  add_verbose_option(cmd);
}

void add_verbose_option(CLI::App* cmd) {
  cmd->add_flag_callback(
      "--verbose", [] { verbose_warnings() = true; },
      "Warnings: print every one (default: many of one kind print as one line with a count "
      "and an example; JSON's \"warnings\" always lists them all)");
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

namespace {

// What say_input and say_set_apart noted for the JSON output (one command per process).
struct JsonNotes {
  std::vector<std::string> inputs;
  std::string set_apart;
  bool empty() const { return inputs.empty() && set_apart.empty(); }
};
JsonNotes& json_notes() {
  static JsonNotes notes;
  return notes;
}

// What `text` starts with once the noted members are put first, when it is a JSON object: the
// opening brace, the members and a separator, to write before text[1:] ("" when nothing is
// noted). The text is not copied: a command's JSON may be tens of MB.
std::string input_members_prefix(const std::string& text) {
  JsonNotes& notes = json_notes();
  if (notes.empty() || text.empty() || text.front() != '{') return "";
  std::string member;
  const std::vector<std::string>& inputs = notes.inputs;
  if (inputs.size() == 1) {
    member = "\"input\": " + inputs.front();
  } else if (!inputs.empty()) {
    member = "\"input\": [";
    for (size_t i = 0; i < inputs.size(); ++i) member += (i ? ", " : "") + inputs[i];
    member += "]";
  }
  if (!notes.set_apart.empty())
    member += (member.empty() ? "" : ", ") + std::string("\"set_apart\": ") + notes.set_apart;
  notes = {};
  if (member.empty()) return "";
  size_t rest = text.find_first_not_of(" \n\t", 1);
  bool empty_object = rest != std::string::npos && text[rest] == '}';
  return "{" + member + (empty_object ? "" : ", ");
}

}  // namespace

void say_input(const ProfileFiles& files, bool json_output) {
  if (json_output)
    json_notes().inputs.push_back(render_input_json(files));
  else
    std::fprintf(stderr, "jaxprof: %s\n", render_input_line(files).c_str());
}

EventFilterSpec EventFilterFlags::spec() const {
  EventFilterSpec f;
  f.device = device;
  f.prefix = prefix;
  f.match = match;
  f.min_duration_ps = static_cast<int64_t>(min_duration_ns * 1000.0 + 0.5);
  return f;
}

void add_event_filter_options(CLI::App* cmd, EventFilterFlags& f, const EventFilterWords& w) {
  cmd->add_option("--device", f.device,
                  fmt::format("Only {} whose name contains this (or matches re:REGEX)", w.devices));
  cmd->add_option("--prefix", f.prefix,
                  fmt::format("Only {} whose name starts with this", w.names));
  cmd->add_option("--match", f.match,
                  fmt::format("Only {} whose name matches this RE2 regex (anywhere)", w.names));
  cmd->add_option("--min-duration", f.min_duration_ns,
                  fmt::format("Only {} at least this long (ns)", w.durations))
      ->check(CLI::NonNegativeNumber);
}

void add_steady_state_options(CLI::App* cmd, SteadyStateOptions& o) {
  cmd->add_flag("--include-autotuning", o.include_autotuning,
                "Count the executions of XLA's compile-time autotuner (modules without a program "
                "id, e.g. gemm_fusion_dot.411) as steady state");
  cmd->add_flag("--include-warmup", o.include_warmup,
                "Count each program's first execution on a device, and the device time spent "
                "compiling, as steady state");
}

void say_set_apart(const Profile& profile, const SteadyStateOptions& o, bool with_compiles,
                   bool json_output) {
  SetApartSummary s = summarize_set_apart(steady_state(profile, o),
                                          with_compiles ? &steady_state_time(profile, o) : nullptr);
  if (json_output) {
    json_notes().set_apart = render_set_apart_json(s);
    return;
  }
  std::string line = render_set_apart_line(s);
  if (!line.empty()) std::fprintf(stderr, "jaxprof: %s\n", line.c_str());
}

void say_set_apart(const PartialSet& set, const SteadyStateOptions& o,
                   const CompileResult* compiles, bool json_output) {
  SetApartSummary s = set_apart_from_partials(set, o, compiles);
  if (json_output) {
    json_notes().set_apart = render_set_apart_json(s);
    return;
  }
  std::string line = render_set_apart_line(s);
  if (!line.empty()) std::fprintf(stderr, "jaxprof: %s\n", line.c_str());
}

void write(const std::string& text) {
  const std::string prefix = json_notes().empty() ? "" : input_members_prefix(text);
  const size_t skip = prefix.empty() ? 0 : 1;  // the prefix holds the opening brace
  if ((!prefix.empty() && std::fwrite(prefix.data(), 1, prefix.size(), stdout) != prefix.size()) ||
      std::fwrite(text.data() + skip, 1, text.size() - skip, stdout) != text.size() - skip ||
      std::fflush(stdout) != 0) {
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

void load_set(const CommonOptions& o, const PartialExtractOptions& extract, LoadedPartials& out,
              std::function<void(const Profile&)> one_profile,
              std::function<void(size_t, const Profile&)> each_profile, bool release_counted) {
  PartialLoadOptions lo;
  lo.import.release_counted = release_counted;
  lo.one_profile = std::move(one_profile);
  lo.each_profile = std::move(each_profile);
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
  say_input(out.files, format_of(o) == OutputFormat::kJson);
  for (const HostPartial& h : out.set.heads()) warn(h.warnings);
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
  say_input(out.files, format_of(o) == OutputFormat::kJson);
}

OutputFormat format_of(const CommonOptions& o) {
  OutputFormat f = OutputFormat::kTable;
  parse_output_format(o.format, f);
  return f;
}

void warn(const std::vector<std::string>& warnings) {
  // Many of one kind read as one line each (common/warning_kind.h); --verbose lists them all.
  const std::vector<std::string> lines =
      verbose_warnings() ? warnings : summarise_warnings(warnings);
  for (const auto& w : lines) std::fprintf(stderr, "jaxprof: warning: %s\n", w.c_str());
}

}  // namespace jaxprof::cli
