// Finds the profile files behind a path: an XSpace file, a run directory
// (`.../plugins/profile/<session>/` holding `<host>.xplane.pb`), a TensorBoard log dir, or the
// `plugins/profile` directory itself. Sessions are ordered by name (JAX names them by timestamp).
#pragma once

#include <string>
#include <vector>

namespace jaxprof {

struct HostFile {
  std::string host;
  std::string path;
};

struct ProfileFiles {
  std::string session;                // empty for a single file
  std::vector<std::string> sessions;  // every session found (for messages and `info`)
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

// Throws InputError (naming the path) when nothing usable is found, or when the requested
// session or host does not exist (listing the ones that do).
ProfileFiles discover_profile(const std::string& path, const DiscoverOptions& options);

}  // namespace jaxprof
