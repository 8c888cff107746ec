// What `diff` and `check` share: two sides on the command line (one profile each, or several
// captures per side with --base/--new) and percentages.
#pragma once

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <string>
#include <vector>

#include "cli_common.h"
#include "jaxprof/analysis/partial/extract_partials.h"
#include "jaxprof/analysis/stats/diff.h"
#include "jaxprof/common/parallel_parts.h"
#include "jaxprof/common/error.h"

namespace jaxprof::cli {

struct TwoProfiles {
  std::string base_arg, new_arg;       // positional: one profile per side
  std::vector<std::string> base, now;  // --base / --new: one or more captures per side
  std::vector<std::string> hosts;
  unsigned threads = 0;
  bool include_autotuning = false;
};

inline void add_two_profiles(CLI::App* cmd, TwoProfiles& o) {
  cmd->add_option("base", o.base_arg, "BASE profile (file, run directory or log directory)");
  cmd->add_option("new", o.new_arg, "NEW profile, compared against BASE");
  cmd->add_option("--base", o.base,
                  "BASE captures instead of the BASE argument: profiles of the program made by "
                  "separate processes (--base A B C or --base A --base B)")
      ->expected(1, 1 << 16);
  cmd->add_option("--new", o.now, "NEW captures instead of the NEW argument, like --base")
      ->expected(1, 1 << 16);
  cmd->add_option("--host", o.hosts, "Only these hosts (repeat or comma-separate)")->delimiter(',');
  cmd->add_flag(
      "--include-autotuning", o.include_autotuning,
      "Compare the executions of XLA's compile-time autotuner too (docs/steady-state.md)");
  add_threads_option(cmd, o.threads);
}

// The profiles of one side, from its positional argument or its option (not both).
inline std::vector<std::string> side_paths(const std::string& arg,
                                           const std::vector<std::string>& list, const char* side,
                                           const char* option) {
  if (!arg.empty() && !list.empty())
    throw InputError(
        "", fmt::format("{} is given both as an argument and with {}: use one", side, option));
  if (!arg.empty()) return {arg};
  if (list.empty())
    throw InputError(
        "",
        fmt::format("no {} profile: give BASE NEW, or {} with one or more captures", side, option));
  return list;
}

// Loads every capture of a side and pools their samples (pool_samples), saying what was read
// (say_input).
inline ProfileSamples load_side(const TwoProfiles& o, bool base_side, bool json_output) {
  std::vector<std::string> paths = base_side ? side_paths(o.base_arg, o.base, "BASE", "--base")
                                             : side_paths(o.new_arg, o.now, "NEW", "--new");
  CommonOptions common;
  common.hosts = o.hosts;
  common.threads = o.threads;
  std::vector<ProfileSamples> captures;
  for (const std::string& path : paths) {
    common.paths = {path};
    common.format = json_output ? "json" : "table";  // where say_input writes
    PartialExtractOptions extract;
    extract.parts = kPartExecutions | kPartExecutionOps | kPartSteps;
    extract.steady = {.include_autotuning = o.include_autotuning};
    LoadedPartials loaded;
    load_set(common, extract, loaded);
    captures.push_back(samples_from_partials(loaded.set, extract.steady));
  }
  return pool_samples(std::move(captures));
}

// "5%", "5" (both 5 percent) or "0.5%"; throws InputError otherwise.
inline double parse_percent(const std::string& option, const std::string& text) {
  std::string t = text;
  if (!t.empty() && t.back() == '%') t.pop_back();
  char* end = nullptr;
  double v = std::strtod(t.c_str(), &end);
  if (t.empty() || end != t.c_str() + t.size() || !(v >= 0) || v > 1e6)
    throw InputError("", option + " " + text + ": expected a percentage such as 5%");
  return v / 100.0;
}

}  // namespace jaxprof::cli
