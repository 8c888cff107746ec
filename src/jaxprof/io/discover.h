// Finds the profile files behind a path: an XSpace file, a run directory
// (`.../plugins/profile/<session>/` holding `<host>.xplane.pb`), a TensorBoard log dir, or the
// `plugins/profile` directory itself. Sessions are ordered by name (JAX names them by timestamp).
//
// discover_profile() only looks at names: it says what it found (the session read, the other
// sessions, the host files) so that callers can report it and read the files as they see fit.
// Whether the files found are really hosts of one capture is decided after reading them
// (formats/partial/session_check.h).
#pragma once

#include <string>
#include <vector>

namespace jaxprof {

struct HostFile {
  std::string host;
  std::string path;
};

// How the path given was read.
enum class ProfileLayout {
  kFile,    // one profile file (or several named on the command line: one host each)
  kRunDir,  // a directory holding the host files of one session
  kLogDir,  // a log directory (or its plugins/profile): sessions in subdirectories
};
const char* profile_layout_name(ProfileLayout layout);

struct ProfileFiles {
  std::string path;  // the path given (the first one when several files were named)
  ProfileLayout layout = ProfileLayout::kFile;
  std::string session;                // empty for a single file
  std::string session_dir;            // the directory the host files were read from
  std::vector<std::string> sessions;  // every session found (for messages and `info`)
  // Several sessions were found and none was asked for: the newest (by name) was read.
  bool newest_by_default = false;
  std::vector<HostFile> hosts;
  std::vector<std::string> hlo_files;  // *.hlo.pb / *.hlo_proto.pb beside the profile
};

struct DiscoverOptions {
  std::string session;             // empty = newest
  std::vector<std::string> hosts;  // empty = all
};

bool is_xspace_file_name(const std::string& name);
// Any *.json / *.json.gz named on the command line is read as a Chrome trace.
bool is_chrome_trace_file_name(const std::string& name);
// In a run directory only *.trace.json[.gz] and perfetto_trace.json[.gz] are traces (XProf
// writes other JSON there, e.g. <host>.memory_profile.json.gz); a host's xplane wins over its
// trace, and perfetto_trace.json.gz (a copy JAX makes) is read only when nothing else is there.
bool is_run_dir_trace_file_name(const std::string& name);
bool is_hlo_file_name(const std::string& name);
// "host.xplane.pb[.gz]" and "host.trace.json[.gz]" -> "host"; other names lose their extension.
std::string host_from_file_name(const std::string& name);
// JAX names sessions by the capture's local time: "2024_05_01_13_45_07".
bool is_session_name(const std::string& name);

// Throws InputError (naming the path) when nothing usable is found, when the requested session
// or host does not exist (listing the ones that do), or when a directory is neither a run
// directory nor a log directory but its subdirectories hold profiles (listing them: which one
// to read is the user's choice, not the newest name's).
ProfileFiles discover_profile(const std::string& path, const DiscoverOptions& options);

}  // namespace jaxprof
