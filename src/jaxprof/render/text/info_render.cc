#include "jaxprof/render/text/info_render.h"

#include <fmt/format.h>

#include "jaxprof/common/units.h"

namespace jaxprof {

namespace {

std::string json(const ProfileInfo& info) {
  std::string out = "{\"hosts\": [";
  for (size_t i = 0; i < info.hosts.size(); ++i)
    out += fmt::format("{}{{\"host\": {}, \"file\": {}}}", i ? ", " : "",
                       json_string(info.hosts[i]), json_string(info.files[i]));
  out += fmt::format("], \"events\": {}, \"base_ns\": {}, \"span_ns\": {}, \"planes\": [",
                     info.events, info.base_ns, ps_to_ns_exact(info.last_ps - info.first_ps));
  for (size_t pi = 0; pi < info.planes.size(); ++pi) {
    const PlaneInfo& p = info.planes[pi];
    out += fmt::format(
        "{}{{\"name\": {}, \"kind\": {}, \"host\": {}, \"id\": {}, \"events\": {}, \"stats\": {{",
        pi ? ", " : "", json_string(p.name), json_string(p.kind), json_string(p.host), p.id,
        p.events);
    for (size_t i = 0; i < p.stats.size(); ++i)
      out += fmt::format("{}{}: {}", i ? ", " : "", json_string(p.stats[i].first),
                         json_string(p.stats[i].second));
    out += "}, \"lines\": [";
    for (size_t li = 0; li < p.lines.size(); ++li) {
      const LineInfo& l = p.lines[li];
      out += fmt::format(
          "{}{{\"name\": {}, \"id\": {}, \"events\": {}, \"first_ns\": {}, \"last_ns\": {}}}",
          li ? ", " : "", json_string(l.name), l.id, l.events, ps_to_ns_exact(l.first_ps),
          ps_to_ns_exact(l.last_ps));
    }
    out += "]}";
  }
  out += "], \"modules\": [";
  for (size_t i = 0; i < info.modules.size(); ++i) {
    const ModuleInfo& m = info.modules[i];
    out += fmt::format(
        "{}{{\"name\": {}, \"program_id\": {}, \"events\": {}, \"hlo\": {}, \"instructions\": {}}}",
        i ? ", " : "", json_string(m.name),
        m.program_id == kNoProgram ? std::string("null") : std::to_string(m.program_id), m.events,
        m.has_hlo ? "true" : "false", m.instructions);
  }
  out += "], \"errors\": " + json_string_array(info.errors);
  out += ", \"warnings\": " + json_string_array(info.warnings);
  return out + "}\n";
}

std::string csv(const ProfileInfo& info) {
  std::string out = "host,plane,kind,line,line_id,events,first_ns,last_ns\n";
  for (const PlaneInfo& p : info.planes)
    for (const LineInfo& l : p.lines)
      out += fmt::format("{},{},{},{},{},{},{},{}\n", csv_field(p.host), csv_field(p.name), p.kind,
                         csv_field(l.name), l.id, l.events, ps_to_ns_exact(l.first_ps),
                         ps_to_ns_exact(l.last_ps));
  return out;
}

std::string table(const ProfileInfo& info, bool all_lines) {
  std::string out;
  for (size_t i = 0; i < info.hosts.size(); ++i)
    out += fmt::format("host {}  ({})\n", info.hosts[i], info.files[i]);
  out += fmt::format("{} events over {}\n\n", info.events,
                     human_duration(static_cast<double>(info.last_ps - info.first_ps)));
  for (const PlaneInfo& p : info.planes) {
    out += fmt::format("{}  [{}]  {} lines, {} events{}\n", p.name, p.kind, p.lines.size(),
                       p.events, info.hosts.size() > 1 ? "  host " + p.host : "");
    if (!p.stats.empty()) {
      std::string caps;
      for (const auto& [k, v] : p.stats) {
        if (v.starts_with("<")) continue;  // binary blobs
        caps += (caps.empty() ? "" : ", ") + k + "=" + v;
      }
      if (!caps.empty()) out += "  " + caps + "\n";
    }
    size_t shown = 0;
    const size_t limit = all_lines ? p.lines.size() : 12;
    Table t({{"line"},
             {"id", Measure::kLabel},
             {"events", Measure::kCount},
             {"span", Measure::kDuration}});
    for (const LineInfo& l : p.lines) {
      if (shown++ >= limit) break;
      t.add({l.name, std::to_string(l.id), l.events, l.last_ps - l.first_ps});
    }
    if (t.rows() > 0) {
      std::string rendered = t.render(60);
      size_t pos = 0;
      while (pos < rendered.size()) {
        size_t nl = rendered.find('\n', pos);
        out += "    " + rendered.substr(pos, nl - pos + 1);
        pos = nl + 1;
      }
    }
    if (p.lines.size() > limit)
      out +=
          fmt::format("    ... {} more lines (--all-lines lists them)\n", p.lines.size() - limit);
    out += "\n";
  }
  if (!info.modules.empty()) {
    Table t({{"module"},
             {"program_id", Measure::kLabel},
             {"events", Measure::kCount},
             {"hlo instructions", Measure::kCount}});
    for (const ModuleInfo& m : info.modules)
      t.add({m.name, m.program_id == kNoProgram ? Cell::unknown() : Cell::id(m.program_id),
             m.events, m.has_hlo ? Cell(m.instructions) : Cell::unknown()});
    out += "modules\n" + t.render(60);
  }
  for (const auto& e : info.errors) out += "profile error: " + e + "\n";
  for (const auto& w : info.warnings) out += "profile warning: " + w + "\n";
  return out;
}

}  // namespace

std::string render_info(const ProfileInfo& info, OutputFormat format, bool all_lines) {
  switch (format) {
    case OutputFormat::kJson:
      return json(info);
    case OutputFormat::kCsv:
      return csv(info);
    case OutputFormat::kTable:
      return table(info, all_lines);
  }
  return {};
}

}  // namespace jaxprof
