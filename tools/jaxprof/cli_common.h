// Shared pieces of the jaxprof subcommands. Each subcommand lives in its own cmd_*.cc file and
// registers itself with JAXPROF_COMMAND; main.cc only parses and dispatches.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "jaxprof/analysis/partial/extract_partials.h"
#include "jaxprof/analysis/steps/steady_state.h"
#include "jaxprof/formats/load.h"
#include "jaxprof/pipeline/load_partials.h"
#include "jaxprof/render/text/text.h"

namespace jaxprof::cli {

inline constexpr int kExitBadInput = 2;
inline constexpr int kExitInternal = 1;

// What every profile-reading subcommand accepts.
struct CommonOptions {
  std::vector<std::string> paths;
  std::string session;
  std::vector<std::string> hosts;
  std::string format = "table";
  unsigned threads = 0;
  bool keep_going = false;  // commands that read host by host (add_host_by_host)
};

// The formats a command prints: --format accepts exactly these (the first is the default), and
// --help lists them. An empty list adds no --format (commands that write a file instead).
inline const std::vector<std::string> kAllFormats = {"table", "json", "csv"};
void add_common(CLI::App* cmd, CommonOptions& o,
                const std::vector<std::string>& formats = kAllFormats);
// --wide: table cells are never cut (also set on every command that prints tables by
// add_common).
void add_wide_option(CLI::App* cmd);
// --verbose: every warning on stderr, not one line per kind (also set by add_common).
void add_verbose_option(CLI::App* cmd);
// For commands that read host by host (load_set): --keep-going, and partials as paths.
void add_host_by_host(CLI::App* cmd, CommonOptions& o);
// Reads the hosts one by one into partials holding `extract.parts` (load_partials.h), with a
// progress line on a terminal; prints the hosts' warnings and those skipped, and says what was
// read (say_input).
// `one_profile`, `each_profile`: see PartialLoadOptions (called when the input is one profile,
// and with each host's profile when several are read one by one).
// `release_counted`: see ImportOptions (for commands whose partials read the device lines and
// the host launches only).
void load_set(const CommonOptions& o, const PartialExtractOptions& extract, LoadedPartials& out,
              std::function<void(const Profile&)> one_profile = {},
              std::function<void(size_t, const Profile&)> each_profile = {},
              bool release_counted = false);
void load_set(const CommonOptions& o, uint32_t parts, LoadedPartials& out);
// The profile itself, for commands that read events: refuses partial files with a message.
void refuse_partials(const CommonOptions& o, std::string_view command);
// --threads: the decoder and analysis threads (also caps analysis_threads when loading).
void add_threads_option(CLI::App* cmd, unsigned& threads);
// `release_counted`: see ImportOptions (for commands that read device lines only). Says what was
// read (say_input).
void load(const CommonOptions& o, LoadedProfile& out, bool release_counted = false);
// Says which session and host files a command read: one line on stderr now when its output is a
// table or CSV; with JSON output, the next JSON object write() prints gets an "input" member (an
// array when the command read several profiles).
void say_input(const ProfileFiles& files, bool json_output);
// --include-autotuning and --include-warmup (analysis/steps/steady_state.h).
void add_steady_state_options(CLI::App* cmd, SteadyStateOptions& o);

// The event filters of the commands that select events (ops, roofline, kernels): --device,
// --prefix, --match and --min-duration, declared once. `selects` words the help for what the
// command selects: devices and events, or GPUs, kernels and launches.
struct EventFilterFlags {
  std::string device, prefix, match;
  double min_duration_ns = 0;
  EventFilterSpec spec() const;  // the flags as the analyses take them (max_events 0)
};
struct EventFilterWords {
  const char* devices = "devices";
  const char* names = "events";
  const char* durations = "events";
};
void add_event_filter_options(CLI::App* cmd, EventFilterFlags& f, const EventFilterWords& w = {});
// Says what the steady-state figures left out, like say_input ("set_apart" in JSON).
// `with_compiles`: the command's figures are device time, which compiles are set apart from.
void say_set_apart(const Profile& profile, const SteadyStateOptions& o, bool with_compiles,
                   bool json_output);
// The same for partials (set_apart_from_partials).
void say_set_apart(const PartialSet& set, const SteadyStateOptions& o,
                   const CompileResult* compiles, bool json_output);
OutputFormat format_of(const CommonOptions& o);
// Writes to stdout; a closed pipe (jaxprof ... | head) is not an error. A JSON object gets the
// "input" member of what say_input noted.
void write(const std::string& s);
// Writes `content` to the file `path` and says so on stderr ("jaxprof: wrote PATH (12.3 KiB)"),
// followed by `next` lines when given (how to open it). Throws InputError when it cannot.
void write_file(const std::string& path, const std::string& content, const std::string& what,
                const std::string& next = "");
// Says on stderr that `path` was written (for files written by other code).
void announce_written(const std::string& path, const std::string& what,
                      const std::string& next = "");

// Whether stdout is a terminal: tables written there get a default --top and fit its width.
bool stdout_is_terminal();
// The terminal's width in columns (0 when stdout is not a terminal).
size_t terminal_width();
// Rows a table shows on a terminal when --top is not given.
inline constexpr size_t kTerminalTop = 20;
// The --top to use: what the user gave; else kTerminalTop (or `terminal_default`) for a table on
// a terminal; else 0 (all). JSON and CSV are always complete unless --top is given.
size_t top_for(const CLI::Option* top_option, size_t given, OutputFormat format,
               size_t terminal_default = kTerminalTop);
void warn(const std::vector<std::string>& warnings);

// Adds a subcommand to `app` and returns what to run when it is chosen (returns the exit code;
// InputError and other exceptions are turned into exit codes by main).
using CommandSetup = std::function<std::function<int()>(CLI::App& app)>;

struct CommandRegistration {
  int order;  // position in --help
  CommandSetup setup;
};
std::vector<CommandRegistration>& registered_commands();

struct RegisterCommand {
  RegisterCommand(int order, CommandSetup setup) {
    registered_commands().push_back({order, std::move(setup)});
  }
};

}  // namespace jaxprof::cli
