#include "cli_common.h"

#include <cstdio>

#include "jaxprof/analysis/parallel_parts.h"

namespace jaxprof::cli {

std::vector<CommandRegistration>& registered_commands() {
  static std::vector<CommandRegistration> commands;
  return commands;
}

void add_common(CLI::App* cmd, CommonOptions& o) {
  cmd->add_option("path", o.paths,
                  "Profile: a *.xplane.pb[.gz] file, a run directory (plugins/profile/<session>/), "
                  "or a TensorBoard log directory; several *.xplane.pb files load as one "
                  "multi-host profile; *.hlo.pb / *.hlo_proto.pb files add HLO metadata")
      ->required();
  cmd->add_option("--session", o.session, "Session to read from a log directory (default: newest)");
  cmd->add_option("--host", o.hosts, "Only these hosts (repeat or comma-separate)")->delimiter(',');
  cmd->add_option("--format", o.format, "Output format")
      ->check(CLI::IsMember({"table", "json", "csv"}))
      ->capture_default_str();
  add_threads_option(cmd, o.threads);
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

void load(const CommonOptions& o, LoadedProfile& out, bool release_counted) {
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
