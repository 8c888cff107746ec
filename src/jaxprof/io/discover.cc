#include "jaxprof/io/discover.h"

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "jaxprof/common/error.h"

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

size_t profile_file_count(const fs::path& dir) {
  std::error_code ec;
  size_t n = 0;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    std::string name = entry.path().filename().string();
    if (entry.is_regular_file(ec) &&
        (is_xspace_file_name(name) || is_run_dir_trace_file_name(name)))
      ++n;
  }
  return n;
}

bool has_xspace_files(const fs::path& dir) { return profile_file_count(dir) > 0; }

// plugins/profile, the directory TensorBoard and JAX keep sessions in.
bool is_sessions_dir(const fs::path& dir) {
  fs::path clean = dir.lexically_normal();
  if (clean.filename().empty()) clean = clean.parent_path();
  return clean.filename() == "profile" && clean.parent_path().filename() == "plugins";
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

const char* profile_layout_name(ProfileLayout layout) {
  switch (layout) {
    case ProfileLayout::kFile:
      return "file";
    case ProfileLayout::kRunDir:
      return "run-dir";
    case ProfileLayout::kLogDir:
      return "log-dir";
  }
  return "file";
}

bool is_session_name(const std::string& name) {
  // YYYY_MM_DD_HH_MM_SS, digits and underscores in that pattern (JAX may add a suffix).
  constexpr std::string_view kPattern = "dddd_dd_dd_dd_dd_dd";
  if (name.size() < kPattern.size()) return false;
  for (size_t i = 0; i < kPattern.size(); ++i) {
    bool digit = name[i] >= '0' && name[i] <= '9';
    if (kPattern[i] == 'd' ? !digit : name[i] != '_') return false;
  }
  return true;
}

std::string host_from_file_name(const std::string& name) {
  for (std::string_view suffix : {".xplane.pb.gz", ".xplane.pb", ".trace.json.gz", ".trace.json"})
    if (ends_with(name, suffix)) return name.substr(0, name.size() - suffix.size());
  size_t dot = name.find('.');
  return dot == std::string::npos || dot == 0 ? name : name.substr(0, dot);
}

ProfileFiles discover_profile(const std::string& path, const DiscoverOptions& options) {
  ProfileFiles out;
  out.path = path;
  std::error_code ec;
  fs::path p(path);
  if (!fs::exists(p, ec)) throw InputError(path, "no such file or directory");

  if (!fs::is_directory(p, ec)) {
    if (!options.session.empty())
      throw InputError(path, "--session applies to a log directory, not a single file");
    out.hosts.push_back({host_from_file_name(p.filename().string()), path});
  } else if (has_xspace_files(p)) {
    out.layout = ProfileLayout::kRunDir;
    out.session_dir = path;
    out.session = p.filename().string();
    if (out.session.empty()) out.session = p.parent_path().filename().string();
    out.sessions.push_back(out.session);
    if (!options.session.empty() && options.session != out.session)
      throw InputError(
          path, "is the run directory of session " + out.session + ", not " + options.session);
    scan_run_dir(p, out);
  } else {
    // A log dir has plugins/profile/<session>/; accept plugins/profile itself too, and a
    // directory whose subdirectories are all named like sessions (copied out of a log dir).
    fs::path sessions_dir = p / "plugins" / "profile";
    bool log_dir = fs::is_directory(sessions_dir, ec);
    if (!log_dir) {
      sessions_dir = p;
      log_dir = is_sessions_dir(p);
    }
    std::vector<std::string> sessions, described;
    for (const auto& entry : fs::directory_iterator(sessions_dir, ec)) {
      if (!entry.is_directory(ec)) continue;
      size_t files = profile_file_count(entry.path());
      if (files == 0) continue;
      sessions.push_back(entry.path().filename().string());
    }
    std::sort(sessions.begin(), sessions.end());
    if (sessions.empty())
      throw InputError(path,
                       "no profile found: expected *.xplane.pb files, a run directory, or a "
                       "log directory with plugins/profile/<session>/");
    if (!log_dir)
      log_dir = std::all_of(sessions.begin(), sessions.end(),
                            [](const std::string& s) { return is_session_name(s); });
    for (const auto& s : sessions) {
      size_t files = profile_file_count(sessions_dir / s);
      described.push_back(s + " (" + std::to_string(files) + (files == 1 ? " file)" : " files)"));
    }
    out.layout = ProfileLayout::kLogDir;
    out.sessions = sessions;
    if (!options.session.empty()) {
      if (std::find(sessions.begin(), sessions.end(), options.session) == sessions.end())
        throw InputError(path, "no session '" + options.session + "'; sessions: " + join(sessions));
      out.session = options.session;
    } else if (!log_dir) {
      // Subdirectories that are not sessions of one log directory: reading the last name would
      // be a guess.
      throw InputError(
          path,
          "is neither a run directory nor a log directory (plugins/profile/<session>/), "
          "but its subdirectories hold profiles: " +
              join(described) + "; pick one with --session NAME, or name its directory (" +
              (fs::path(path) / sessions.back()).string() + ")");
    } else {
      out.session = sessions.back();
      out.newest_by_default = sessions.size() > 1;
    }
    out.session_dir = (sessions_dir / out.session).string();
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
