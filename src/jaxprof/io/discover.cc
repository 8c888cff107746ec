#include "jaxprof/io/discover.h"

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "jaxprof/error.h"

namespace fs = std::filesystem;

namespace jaxprof {

namespace {

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& s : items) {
    if (!out.empty()) out += ", ";
    out += s;
  }
  return out.empty() ? "(none)" : out;
}

// Xplane and HLO files directly inside dir, sorted by name for a stable host order.
void scan_run_dir(const fs::path& dir, ProfileFiles& out) {
  std::error_code ec;
  std::vector<fs::path> entries;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.is_regular_file(ec)) entries.push_back(entry.path());
  }
  std::sort(entries.begin(), entries.end());
  std::vector<HostFile> traces;
  size_t first = out.hosts.size();
  for (const auto& p : entries) {
    std::string name = p.filename().string();
    if (is_xspace_file_name(name))
      out.hosts.push_back({host_from_file_name(name), p.string()});
    else if (is_run_dir_trace_file_name(name))
      traces.push_back({host_from_file_name(name), p.string()});
    else if (is_hlo_file_name(name))
      out.hlo_files.push_back(p.string());
  }
  // The xplane of a host holds everything its trace does and more.
  bool only_perfetto = out.hosts.size() == first;
  for (const auto& t : traces)
    if (!ends_with(t.path, "perfetto_trace.json.gz") && !ends_with(t.path, "perfetto_trace.json"))
      only_perfetto = false;
  for (const auto& t : traces) {
    bool perfetto =
        ends_with(t.path, "perfetto_trace.json.gz") || ends_with(t.path, "perfetto_trace.json");
    if (perfetto && !only_perfetto) continue;
    bool has_xplane =
        std::any_of(out.hosts.begin() + static_cast<ptrdiff_t>(first), out.hosts.end(),
                    [&](const HostFile& h) { return h.host == t.host; });
    if (!has_xplane) out.hosts.push_back(t);
  }
  std::sort(out.hosts.begin() + static_cast<ptrdiff_t>(first), out.hosts.end(),
            [](const HostFile& a, const HostFile& b) { return a.path < b.path; });
}

bool has_xspace_files(const fs::path& dir) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    std::string name = entry.path().filename().string();
    if (entry.is_regular_file(ec) &&
        (is_xspace_file_name(name) || is_run_dir_trace_file_name(name)))
      return true;
  }
  return false;
}

}  // namespace

bool is_xspace_file_name(const std::string& name) {
  return ends_with(name, ".xplane.pb") || ends_with(name, ".xplane.pb.gz");
}

bool is_chrome_trace_file_name(const std::string& name) {
  return ends_with(name, ".json") || ends_with(name, ".json.gz");
}

bool is_run_dir_trace_file_name(const std::string& name) {
  return ends_with(name, ".trace.json") || ends_with(name, ".trace.json.gz") ||
         name == "perfetto_trace.json" || name == "perfetto_trace.json.gz";
}

bool is_hlo_file_name(const std::string& name) {
  return ends_with(name, ".hlo.pb") || ends_with(name, ".hlo_proto.pb") ||
         ends_with(name, ".hlo.pb.gz") || ends_with(name, ".hlo_proto.pb.gz");
}

std::string host_from_file_name(const std::string& name) {
  for (std::string_view suffix : {".xplane.pb.gz", ".xplane.pb", ".trace.json.gz", ".trace.json"})
    if (ends_with(name, suffix)) return name.substr(0, name.size() - suffix.size());
  size_t dot = name.find('.');
  return dot == std::string::npos || dot == 0 ? name : name.substr(0, dot);
}

ProfileFiles discover_profile(const std::string& path, const DiscoverOptions& options) {
  ProfileFiles out;
  std::error_code ec;
  fs::path p(path);
  if (!fs::exists(p, ec)) throw InputError(path, "no such file or directory");

  if (!fs::is_directory(p, ec)) {
    if (!options.session.empty())
      throw InputError(path, "--session applies to a log directory, not a single file");
    out.hosts.push_back({host_from_file_name(p.filename().string()), path});
  } else if (has_xspace_files(p)) {
    out.session = p.filename().string();
    if (out.session.empty()) out.session = p.parent_path().filename().string();
    out.sessions.push_back(out.session);
    if (!options.session.empty() && options.session != out.session)
      throw InputError(
          path, "is the run directory of session " + out.session + ", not " + options.session);
    scan_run_dir(p, out);
  } else {
    // A log dir has plugins/profile/<session>/; accept plugins/profile itself too.
    fs::path sessions_dir = p / "plugins" / "profile";
    if (!fs::is_directory(sessions_dir, ec)) sessions_dir = p;
    std::vector<std::string> sessions;
    for (const auto& entry : fs::directory_iterator(sessions_dir, ec)) {
      if (entry.is_directory(ec) && has_xspace_files(entry.path()))
        sessions.push_back(entry.path().filename().string());
    }
    std::sort(sessions.begin(), sessions.end());
    if (sessions.empty())
      throw InputError(path,
                       "no profile found: expected *.xplane.pb files, a run directory, or a "
                       "log directory with plugins/profile/<session>/");
    out.sessions = sessions;
    if (options.session.empty()) {
      out.session = sessions.back();
    } else if (std::find(sessions.begin(), sessions.end(), options.session) != sessions.end()) {
      out.session = options.session;
    } else {
      throw InputError(path, "no session '" + options.session + "'; sessions: " + join(sessions));
    }
    scan_run_dir(sessions_dir / out.session, out);
  }

  if (!options.hosts.empty()) {
    std::vector<std::string> available;
    for (const auto& h : out.hosts) available.push_back(h.host);
    std::vector<HostFile> chosen;
    for (const auto& want : options.hosts) {
      auto it = std::find_if(out.hosts.begin(), out.hosts.end(),
                             [&](const HostFile& h) { return h.host == want; });
      if (it == out.hosts.end())
        throw InputError(path, "no host '" + want + "'; hosts: " + join(available));
      chosen.push_back(*it);
    }
    out.hosts = std::move(chosen);
  }
  return out;
}

}  // namespace jaxprof
