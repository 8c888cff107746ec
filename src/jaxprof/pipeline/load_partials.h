// From paths on the command line to a PartialSet, host by host: profiles are read one host at a
// time (up to `threads` hosts at once), each reduced to its partial and dropped; the partials
// (and those of partial files) wait in a temporary file (partial_spill.h) with only each host's
// head in memory, so memory peaks near the largest hosts being read, not the sum of the hosts.
// Every command that reports on whole profiles (summary, ops, timeline, modules, collectives,
// compile, diff, check) loads this way, one host or thousands.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "jaxprof/analysis/partial/extract_partials.h"
#include "jaxprof/formats/load.h"
#include "jaxprof/model/partial/partial.h"

namespace jaxprof {

struct PartialLoadProgress {
  size_t done = 0, total = 0;  // hosts
  uint64_t bytes = 0;          // of the files read so far
  double seconds = 0;
};

struct PartialLoadOptions {
  std::string session;             // for log directories; empty = newest
  std::vector<std::string> hosts;  // empty = all
  PartialExtractOptions extract;   // what to keep of each host
  ImportOptions import;            // threads: hosts read at once and their decoders together
  bool keep_going = false;         // skip (and report) a host that cannot be read
  std::function<void(const PartialLoadProgress&)> progress;  // after each host
  // Called with the profile, before it is dropped, when the input is one profile (one host's
  // file, or an archive or trace read whole) and no partial files: for what needs the events
  // themselves (summary's critical path). Not called when several hosts are read one by one.
  std::function<void(const Profile&)> one_profile;
  // Called with each host's profile, before it is dropped, when several hosts are read one by
  // one: for what needs each host's events (the report's roofline and memory). `host` is the
  // host's place among the host files read, the order a profile of them all would hold them in.
  // Called on the threads that read the hosts, several at once.
  std::function<void(size_t host, const Profile&)> each_profile;
};

struct SkippedHost {
  std::string host, path, reason;
};

struct LoadedPartials {
  PartialSet set;
  size_t hosts_read = 0;             // hosts whose profile or partial was read
  std::vector<SkippedHost> skipped;  // with keep_going
  uint64_t bytes_read = 0;           // profile and partial files
  bool whole_profile = false;        // read as one profile (nsys-jax archives, Chrome traces)
  ProfileFiles files;                // what was read: the session and host files (partial files)
};

// `paths`: profiles as load_profile takes them, *.partial files, and directories of them.
// Throws InputError for bad input (the first failing host in host order, unless keep_going), and
// for hosts found in one directory that are not the hosts of one capture (session_check.h).
void load_partials(const std::vector<std::string>& paths, const PartialLoadOptions& options,
                   LoadedPartials& out);

// Whether `paths` name partial files (or directories holding them) only.
bool names_partials(const std::vector<std::string>& paths);

}  // namespace jaxprof
