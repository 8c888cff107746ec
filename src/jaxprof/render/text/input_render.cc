#include "jaxprof/render/text/input_render.h"

#include <fmt/format.h>

#include <filesystem>

#include "jaxprof/render/text/text.h"

namespace jaxprof {

namespace {

std::string file_name(const std::string& path) {
  return std::filesystem::path(path).filename().string();
}

}  // namespace

std::string render_input_line(const ProfileFiles& f) {
  std::string out = "read ";
  if (!f.session.empty()) {
    out += "session " + f.session;
    if (f.layout == ProfileLayout::kLogDir) {
      if (f.newest_by_default)
        out += fmt::format(" (newest of {} in {}; --session picks another)", f.sessions.size(),
                           f.path);
      else
        out += " of " + f.path;
    }
    out += ": ";
  }
  if (f.hosts.size() == 1 && f.session.empty()) {
    out += f.hosts.front().path;
  } else {
    out += fmt::format("{} host{}", f.hosts.size(), f.hosts.size() == 1 ? "" : "s");
    // One line on a terminal even for a thousand hosts: the JSON's "input" lists every one.
    constexpr size_t kNamed = 8;
    const size_t named = f.hosts.size() > kNamed ? kNamed - 1 : f.hosts.size();
    for (size_t i = 0; i < named; ++i) {
      const HostFile& h = f.hosts[i];
      out += i == 0 ? " " : ", ";
      std::string name = f.session.empty() ? h.path : file_name(h.path);
      out += h.host == host_from_file_name(file_name(h.path)) ? name : h.host + " (" + name + ")";
    }
    if (named < f.hosts.size())
      out += fmt::format(" and {} more (the JSON output lists every one)", f.hosts.size() - named);
  }
  if (!f.hlo_files.empty())
    out +=
        fmt::format(", and {} HLO file{}", f.hlo_files.size(), f.hlo_files.size() == 1 ? "" : "s");
  return out;
}

std::string render_input_json(const ProfileFiles& f) {
  std::string sessions, hosts, hlo;
  for (const std::string& s : f.sessions)
    sessions += (sessions.empty() ? "" : ", ") + json_string(s);
  for (const HostFile& h : f.hosts)
    hosts += fmt::format("{}{{\"host\": {}, \"path\": {}}}", hosts.empty() ? "" : ", ",
                         json_string(h.host), json_string(h.path));
  for (const std::string& h : f.hlo_files) hlo += (hlo.empty() ? "" : ", ") + json_string(h);
  return fmt::format(
      "{{\"path\": {}, \"layout\": \"{}\", \"session\": {}, \"session_dir\": {}, "
      "\"sessions\": [{}], \"newest_by_default\": {}, \"hosts\": [{}], \"hlo_files\": [{}]}}",
      json_string(f.path), profile_layout_name(f.layout),
      f.session.empty() ? std::string("null") : json_string(f.session),
      f.session_dir.empty() ? std::string("null") : json_string(f.session_dir), sessions,
      f.newest_by_default ? "true" : "false", hosts, hlo);
}

}  // namespace jaxprof
