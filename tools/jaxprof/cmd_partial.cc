// jaxprof partial: each host's partial summary (docs/multihost.md), for merging later or
// elsewhere: every command that reports on whole profiles takes partial files as profiles.
#include <fmt/format.h>

#include <filesystem>

#include "cli_common.h"
#include "jaxprof/analysis/partial/extract_partials.h"
#include "jaxprof/common/error.h"
#include "jaxprof/formats/partial/partial_file.h"

namespace fs = std::filesystem;

namespace jaxprof::cli {
namespace {

RegisterCommand partial_command(97, [](CLI::App& app) -> std::function<int()> {
  struct Options {
    CommonOptions common;
    std::string output;
    SteadyStateOptions steady;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = app.add_subcommand(
      "partial",
      "Write each host's partial summary: what summary, ops, timeline, modules, collectives, "
      "compile, diff and check need, small and mergeable; those commands take partials as "
      "profiles");
  cmd->footer(
      "-o FILE.partial[.gz] writes every host into one file; -o DIR/ (an existing directory or a\n"
      "name ending in /) writes DIR/<host>.partial per host. Default: <host>.partial for one\n"
      "host, <session>.partial for several. Hosts are read one at a time (--threads at once), so\n"
      "memory stays near the largest host's. Partials given as input are merged. A partial\n"
      "holds the steady state its flags chose (docs/steady-state.md): commands read it with\n"
      "the same flags. See docs/multihost.md.");
  add_common(cmd, o->common, /*formats=*/{});  // writes partial files, prints no table
  add_host_by_host(cmd, o->common);
  cmd->add_option("-o,--output", o->output, "Partial file, or directory for one file per host");
  add_steady_state_options(cmd, o->steady);
  return [o]() {
    PartialExtractOptions extract;
    extract.steady = o->steady;
    LoadedPartials loaded;
    load_set(o->common, extract, loaded);
    loaded.set.require_steady(o->steady, "partial");
    // Host by host from the set's store: a thousand hosts are never decoded together.
    const std::vector<HostPartial>& hosts = loaded.set.heads();
    std::string out = o->output;
    std::error_code ec;
    bool per_host = !out.empty() && (out.ends_with('/') || fs::is_directory(out, ec));
    if (out.empty()) {
      std::string stem = hosts.size() == 1 ? hosts.front().host : "hosts";
      if (hosts.size() > 1) {
        fs::path first(o->common.paths.front());
        while (!first.empty() && !first.has_filename()) first = first.parent_path();
        std::string name = first.filename().string();
        if (!name.empty() && name.find('.') == std::string::npos) stem = name;
      }
      out = stem + ".partial";
    } else if (!per_host && !is_partial_file_name(fs::path(out).filename().string())) {
      throw InputError(out, "name the output *.partial (one file) or a directory ending in /");
    }
    if (per_host) {
      fs::create_directories(out, ec);
      if (ec) throw InputError(out, "cannot create the directory: " + ec.message());
      loaded.set.for_each_host([&](uint32_t, const HostPartial& h) {
        std::string path = (fs::path(out) / (h.host + ".partial")).string();
        save_partial_file(path, write_partial_file({&h}));
        announce_written(path, "partial summary of host " + h.host);
      });
    } else {
      save_partial_file(out, write_partial_file(loaded.set));
      announce_written(out, fmt::format("partial summary of {} host{}", hosts.size(),
                                        hosts.size() == 1 ? "" : "s"));
    }
    return 0;
  };
});

}  // namespace
}  // namespace jaxprof::cli
