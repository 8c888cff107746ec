// The sessions (captures) under a log directory, for `jaxprof sessions`, `jaxprof.sessions()`
// and XAX's view_profile: every directory at or under it that holds profile files
// (`<host>.xplane.pb[.gz]`, `<host>.trace.json[.gz]`), in any of the layouts JAX writes
// (`<logdir>/plugins/profile/<session>/`, XAX's `<logdir>/<name>_step_<N>/plugins/profile/
// <session>/`, a session directory itself), with its hosts (as discover_profile reads them) and
// every file's size and modification time.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace jaxprof {

struct SessionFile {
  std::string name;  // the file's name in the session's directory
  std::string path;
  uint64_t bytes = 0;
  double mtime = 0;  // seconds since the epoch
  std::string host;  // the host it holds, empty for other files (HLO dumps, memory profiles)
};

struct SessionInfo {
  std::string name;      // the path relative to the log directory (posix), or the directory's name
  std::string path;      // the session's directory
  std::string log_dir;   // <log_dir>/plugins/profile/<session>; empty when not in that layout
  std::vector<std::string> hosts;  // as discover_profile reads them (an xplane wins over a trace)
  std::vector<SessionFile> files;  // every plain file directly in it, by name
  uint64_t bytes = 0;              // all of them
  double mtime = 0;                // the newest file's modification time
};

// Newest first (by the newest file's time, then by name). Throws InputError when `log_dir` is
// not a directory; an empty list: a directory without captures.
std::vector<SessionInfo> list_sessions(const std::string& log_dir);

// The session `wanted` names: its relative path, its directory's name, the first folder of its
// path (XAX's `<name>_step_<N>`), or the end of its directory's name after a "_" (tried in that
// order); the newest when `wanted` is empty. Throws InputError naming the sessions there are
// (or those it could mean).
const SessionInfo& find_session(const std::vector<SessionInfo>& sessions,
                                const std::string& wanted, const std::string& log_dir);

// Copies the session's files into `dest`/<its directory's name>/ (made as needed) and returns
// that directory. Throws InputError when `dest` is a file or the target holds files already.
std::string extract_session(const SessionInfo& session, const std::string& dest);

}  // namespace jaxprof
