// What `diff` and `check` share: two profiles on the command line and percentages.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <string>
#include <vector>

#include "cli_common.h"
#include "jaxprof/analysis/diff.h"
#include "jaxprof/error.h"

namespace jaxprof::cli {

struct TwoProfiles {
  std::string base, now;
  std::vector<std::string> hosts;
  unsigned threads = 0;
};

inline void add_two_profiles(CLI::App* cmd, TwoProfiles& o) {
  cmd->add_option("base", o.base, "BASE profile (file, run directory or log directory)")
      ->required();
  cmd->add_option("new", o.now, "NEW profile, compared against BASE")->required();
  cmd->add_option("--host", o.hosts, "Only these hosts (repeat or comma-separate)")->delimiter(',');
  cmd->add_option("--threads", o.threads, "Decoder threads (default: one per core)");
}

inline ProfileSamples load_samples(const TwoProfiles& o, const std::string& path) {
  LoadOptions lo;
  lo.hosts = o.hosts;
  lo.import.threads = o.threads;
  LoadedProfile loaded;
  load_profile({path}, lo, loaded);
  warn(loaded.profile.warnings);
  return collect_samples(loaded.profile);
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
