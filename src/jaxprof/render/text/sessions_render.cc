#include "jaxprof/render/text/sessions_render.h"

#include <fmt/format.h>

#include <cmath>
#include <ctime>

#include "jaxprof/common/units.h"

namespace jaxprof {

std::string local_time_text(double seconds) {
  std::time_t t = static_cast<std::time_t>(std::floor(seconds));
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm);
  return buf;
}

namespace {

std::string json_or_null(const std::string& s) { return s.empty() ? "null" : json_string(s); }

std::string json(const std::vector<SessionInfo>& sessions, const std::string& log_dir) {
  std::string out = fmt::format("{{\"log_dir\": {}, \"sessions\": [", json_string(log_dir));
  for (size_t i = 0; i < sessions.size(); ++i) {
    const SessionInfo& s = sessions[i];
    out += fmt::format(
        "{}{{\"name\": {}, \"path\": {}, \"log_dir\": {}, \"hosts\": {}, \"bytes\": {}, "
        "\"mtime\": {}, \"modified\": {}, \"files\": [",
        i ? ", " : "", json_string(s.name), json_string(s.path), json_or_null(s.log_dir),
        json_string_array(s.hosts), s.bytes, number(s.mtime),
        json_string(local_time_text(s.mtime)));
    for (size_t k = 0; k < s.files.size(); ++k) {
      const SessionFile& f = s.files[k];
      out += fmt::format(
          "{}{{\"name\": {}, \"path\": {}, \"host\": {}, \"bytes\": {}, \"mtime\": {}, "
          "\"modified\": {}}}",
          k ? ", " : "", json_string(f.name), json_string(f.path), json_or_null(f.host), f.bytes,
          number(f.mtime), json_string(local_time_text(f.mtime)));
    }
    out += "]}";
  }
  return out + "]}\n";
}

std::string csv(const std::vector<SessionInfo>& sessions) {
  std::string out = "session,file,host,bytes,modified,mtime,path\n";
  for (const SessionInfo& s : sessions)
    for (const SessionFile& f : s.files)
      out += fmt::format("{},{},{},{},{},{},{}\n", csv_field(s.name), csv_field(f.name),
                         csv_field(f.host), f.bytes, local_time_text(f.mtime), number(f.mtime),
                         csv_field(f.path));
  return out;
}

std::string table(const std::vector<SessionInfo>& sessions, const std::string& log_dir) {
  if (sessions.empty()) return fmt::format("no sessions under {}\n", log_dir);
  std::string out = fmt::format("{} session{} under {}, newest first:\n\n", sessions.size(),
                                sessions.size() == 1 ? "" : "s", log_dir);
  Table t({{"session"}, {"file"}, {"host"}, {"size", Measure::kBytes}, {"modified"}});
  for (const SessionInfo& s : sessions) {
    std::string hosts = fmt::format("{} host{}", s.hosts.size(), s.hosts.size() == 1 ? "" : "s");
    t.add({s.name, fmt::format("{} file{}", s.files.size(), s.files.size() == 1 ? "" : "s"),
           hosts, Cell(static_cast<double>(s.bytes)), local_time_text(s.mtime)});
    for (const SessionFile& f : s.files)
      t.add({"", "  " + f.name, f.host, Cell(static_cast<double>(f.bytes)),
             local_time_text(f.mtime)});
  }
  out += t.render(200);
  out += fmt::format(
      "\nread the newest:  jaxprof summary {}\n"
      "copy one out:     jaxprof sessions {} --extract DIR --session NAME\n",
      sessions.front().path, log_dir);
  return out;
}

}  // namespace

std::string render_sessions(const std::vector<SessionInfo>& sessions, const std::string& log_dir,
                            OutputFormat format) {
  return render_in(
      format, sessions, [&](const auto& s) { return json(s, log_dir); }, csv,
      [&](const auto& s) { return table(s, log_dir); });
}

}  // namespace jaxprof
