#include "jaxprof/io/session_list.h"

#include <sys/stat.h>

#include <algorithm>
#include <functional>
#include <filesystem>
#include <system_error>

#include "jaxprof/common/error.h"
#include "jaxprof/io/discover.h"

namespace fs = std::filesystem;

namespace jaxprof {

namespace {

// As os.stat's st_mtime: file_time_type's clock has no portable conversion before C++20's
// clock_cast, which GCC 12 lacks.
double modified_seconds(const fs::path& p) {
  struct stat st {};
  if (::stat(p.c_str(), &st) != 0) return 0;
  return static_cast<double>(st.st_mtim.tv_sec) + static_cast<double>(st.st_mtim.tv_nsec) * 1e-9;
}

bool is_profile_file(const std::string& name) {
  return is_xspace_file_name(name) || is_run_dir_trace_file_name(name);
}

// The session in `dir`, when it holds profile files.
bool read_session(const fs::path& dir, const fs::path& root, SessionInfo& s) {
  std::error_code ec;
  bool any = false;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (!entry.is_regular_file(ec)) continue;
    std::string name = entry.path().filename().string();
    any |= is_profile_file(name);
    SessionFile f{name, entry.path().string(), entry.file_size(ec), 0, {}};
    f.mtime = modified_seconds(entry.path());
    s.files.push_back(std::move(f));
  }
  if (!any) return false;
  std::sort(s.files.begin(), s.files.end(),
            [](const SessionFile& a, const SessionFile& b) { return a.name < b.name; });
  // The hosts and the file of each, as every command reads the directory.
  ProfileFiles found = discover_profile(dir.string(), {});
  for (const HostFile& h : found.hosts) {
    s.hosts.push_back(h.host);
    for (SessionFile& f : s.files)
      if (f.path == h.path) f.host = h.host;
  }
  for (const SessionFile& f : s.files) {
    s.bytes += f.bytes;
    s.mtime = std::max(s.mtime, f.mtime);
  }
  s.path = dir.string();
  std::string rel = dir.lexically_relative(root).generic_string();
  s.name = rel == "." || rel.empty() ? fs::absolute(dir).lexically_normal().filename().string()
                                     : rel;
  if (s.name.empty()) s.name = fs::absolute(dir).parent_path().filename().string();
  fs::path profile = dir.parent_path();
  if (profile.filename() == "profile" && profile.parent_path().filename() == "plugins")
    s.log_dir = profile.parent_path().parent_path().string();
  return true;
}

std::string names_of(const std::vector<SessionInfo>& sessions) {
  std::string out;
  for (const SessionInfo& s : sessions) out += (out.empty() ? "" : ", ") + s.name;
  return out;
}

}  // namespace

std::vector<SessionInfo> list_sessions(const std::string& log_dir) {
  std::error_code ec;
  fs::path root = fs::path(log_dir).lexically_normal();
  if (root.filename().empty() && root.has_parent_path()) root = root.parent_path();
  if (!fs::exists(root, ec)) throw InputError(log_dir, "no such file or directory");
  if (!fs::is_directory(root, ec)) throw InputError(log_dir, "no sessions: not a directory");
  std::vector<fs::path> dirs{root};
  for (auto it = fs::recursive_directory_iterator(
           root, fs::directory_options::skip_permission_denied, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
    if (it->is_directory(ec)) dirs.push_back(it->path());
  std::vector<SessionInfo> sessions;
  for (const fs::path& d : dirs) {
    SessionInfo s;
    if (read_session(d, root, s)) sessions.push_back(std::move(s));
  }
  std::sort(sessions.begin(), sessions.end(), [](const SessionInfo& a, const SessionInfo& b) {
    return a.mtime != b.mtime ? a.mtime > b.mtime : a.name > b.name;
  });
  return sessions;
}

const SessionInfo& find_session(const std::vector<SessionInfo>& sessions,
                                const std::string& wanted_in, const std::string& log_dir) {
  if (sessions.empty())
    throw InputError(log_dir, "no sessions (no *.xplane.pb or *.trace.json[.gz] files) under it");
  if (wanted_in.empty()) return sessions.front();
  std::string wanted = wanted_in;
  while (!wanted.empty() && wanted.back() == '/') wanted.pop_back();
  while (!wanted.empty() && wanted.front() == '/') wanted.erase(0, 1);
  auto dir_name = [](const SessionInfo& s) { return fs::path(s.path).filename().string(); };
  const std::vector<std::function<bool(const SessionInfo&)>> rules = {
      [&](const SessionInfo& s) { return s.name == wanted; },
      [&](const SessionInfo& s) { return dir_name(s) == wanted; },
      [&](const SessionInfo& s) { return s.name.substr(0, s.name.find('/')) == wanted; },
      [&](const SessionInfo& s) { return dir_name(s).ends_with("_" + wanted); }};
  std::vector<const SessionInfo*> hits;
  for (const auto& rule : rules) {
    for (const SessionInfo& s : sessions)
      if (rule(s)) hits.push_back(&s);
    if (!hits.empty()) break;
  }
  if (hits.size() == 1) return *hits.front();
  if (hits.empty())
    throw InputError(log_dir,
                     "no session '" + wanted_in + "'; sessions: " + names_of(sessions));
  std::string which;
  for (const SessionInfo* s : hits) which += (which.empty() ? "" : ", ") + s->name;
  throw InputError(log_dir, "session '" + wanted_in + "' is ambiguous: " + which);
}

std::string extract_session(const SessionInfo& s, const std::string& dest) {
  std::error_code ec;
  fs::path d(dest);
  if (fs::exists(d, ec) && !fs::is_directory(d, ec))
    throw InputError(dest, "exists and is not a directory");
  fs::path target = d / fs::path(s.path).filename();
  if (fs::exists(target, ec) && !fs::is_empty(target, ec))
    throw InputError(target.string(), "holds files already; give another --extract directory");
  fs::create_directories(target, ec);
  if (ec) throw InputError(target.string(), "cannot create: " + ec.message());
  for (const SessionFile& f : s.files) {
    fs::copy_file(f.path, target / f.name, fs::copy_options::none, ec);
    if (ec) throw InputError(f.path, "cannot copy to " + target.string() + ": " + ec.message());
    fs::last_write_time(target / f.name, fs::last_write_time(f.path, ec), ec);
  }
  return target.string();
}

}  // namespace jaxprof
