// jaxprof: where does a JAX program's time go? Thin CLI over the library: parse flags, load,
// analyse, render. Exit codes: 0 success, 2 bad input or usage, 1 internal error.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "jaxprof/analysis/info.h"
#include "jaxprof/analysis/ops.h"
#include "jaxprof/error.h"
#include "jaxprof/formats/load.h"
#include "jaxprof/render/info_render.h"
#include "jaxprof/render/ops_render.h"
#include "jaxprof/render/text.h"

namespace {

constexpr int kExitBadInput = 2;
constexpr int kExitInternal = 1;

struct CommonOptions {
  std::vector<std::string> paths;
  std::string session;
  std::vector<std::string> hosts;
  std::string format = "table";
  unsigned threads = 0;
};

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
  cmd->add_option("--threads", o.threads, "Decoder threads (default: one per core)");
}

void write(const std::string& s) {
  if (std::fwrite(s.data(), 1, s.size(), stdout) != s.size() || std::fflush(stdout) != 0) {
    // A closed pipe (jaxprof ... | head) is not an error worth reporting.
  }
}

void load(const CommonOptions& o, jaxprof::LoadedProfile& out) {
  jaxprof::LoadOptions lo;
  lo.session = o.session;
  lo.hosts = o.hosts;
  lo.import.threads = o.threads;
  jaxprof::load_profile(o.paths, lo, out);
}

jaxprof::OutputFormat format_of(const CommonOptions& o) {
  jaxprof::OutputFormat f = jaxprof::OutputFormat::kTable;
  jaxprof::parse_output_format(o.format, f);
  return f;
}

void warn(const std::vector<std::string>& warnings) {
  for (const auto& w : warnings) std::fprintf(stderr, "jaxprof: warning: %s\n", w.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "jaxprof: where does my JAX program's time go?\n"
      "Reads profiles written by jax.profiler (*.xplane.pb, log directories) and reports exact\n"
      "per-op, per-kernel and per-module device time.\n\n"
      "Examples:\n"
      "  jaxprof info /tmp/logdir                      what the newest capture holds\n"
      "  jaxprof ops /tmp/logdir                       top HLO ops per device\n"
      "  jaxprof ops prof.xplane.pb --group-by kernel --top 20\n"
      "  jaxprof ops prof.xplane.pb --match 'fusion|dot' --format json\n",
      "jaxprof"};
  app.set_version_flag("--version", "jaxprof 0.1.0");
  app.require_subcommand(1);
  app.fallthrough();

  CommonOptions info_opts;
  bool all_lines = false;
  auto* info = app.add_subcommand("info",
                                  "Hosts, devices (with capabilities), lines, event counts, "
                                  "time span and modules of a profile");
  add_common(info, info_opts);
  info->add_flag("--all-lines", all_lines, "List every line (default: 12 per plane)");

  CommonOptions ops_opts;
  std::string group_by = "hlo-op", device, prefix, match;
  double min_duration_ns = 0;
  size_t top = 0;
  uint64_t max_events = 0;
  auto* ops = app.add_subcommand(
      "ops",
      "Device time per HLO op, kernel, module, name or category: count, total, self time, mean,\n"
      "min, max, std and share of the device's busy time (union of its op intervals).\n"
      "Device ops are GPU stream events, TPU 'XLA Ops' events, or on the CPU backend the\n"
      "host-thread events that carry an hlo_op stat.");
  add_common(ops, ops_opts);
  ops->add_option("--group-by", group_by, "Group events by")
      ->check(CLI::IsMember({"hlo-op", "kernel", "module", "name", "category"}))
      ->capture_default_str();
  ops->add_option("--device", device,
                  "Only devices whose plane name contains this (or matches re:REGEX)");
  ops->add_option("--prefix", prefix, "Only events whose name starts with this");
  ops->add_option("--match", match, "Only events whose name matches this RE2 regex (anywhere)");
  ops->add_option("--min-duration", min_duration_ns, "Only events at least this long (ns)")
      ->check(CLI::NonNegativeNumber);
  ops->add_option("--top", top, "Show the N largest groups per device (0 = all)");
  ops->add_option("--max-events", max_events,
                  "Stop counting after N selected events, with a warning (0 = no cap)");

  if (argc == 1) {
    std::fputs(app.help().c_str(), stderr);
    return kExitBadInput;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return kExitBadInput;
  }

  try {
    if (info->parsed()) {
      jaxprof::LoadedProfile loaded;
      load(info_opts, loaded);
      write(jaxprof::render_info(jaxprof::compute_info(loaded.profile), format_of(info_opts),
                                 all_lines));
      return 0;
    }
    if (ops->parsed()) {
      jaxprof::OpsOptions o;
      jaxprof::parse_group_by(group_by, o.group_by);
      o.filter.device = device;
      o.filter.prefix = prefix;
      o.filter.match = match;
      o.filter.min_duration_ps = static_cast<int64_t>(min_duration_ns * 1000.0 + 0.5);
      o.filter.max_events = max_events;
      o.top = top;
      jaxprof::EventFilter check(o.filter);  // reject a bad regex before loading anything
      jaxprof::LoadedProfile loaded;
      load(ops_opts, loaded);
      jaxprof::OpsResult r = jaxprof::compute_ops(loaded.profile, o);
      warn(loaded.profile.warnings);
      warn(r.warnings);
      write(jaxprof::render_ops(r, format_of(ops_opts)));
      return 0;
    }
  } catch (const jaxprof::InputError& e) {
    std::fprintf(stderr, "jaxprof: %s\n", e.what());
    return kExitBadInput;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "jaxprof: out of memory\n");
    return kExitInternal;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "jaxprof: internal error: %s\n", e.what());
    return kExitInternal;
  }
  return 0;
}
