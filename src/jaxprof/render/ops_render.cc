#include "jaxprof/render/ops_render.h"

#include <fmt/format.h>

#include "jaxprof/render/units.h"

namespace jaxprof {

namespace {

bool shows_module(GroupBy g) { return g == GroupBy::kHloOp; }
bool shows_hlo(GroupBy g) { return g == GroupBy::kHloOp; }

std::string json(const OpsResult& r) {
  std::string out = "{\"group_by\": " + json_string(group_by_name(r.group_by)) + ", \"devices\": [";
  for (size_t di = 0; di < r.devices.size(); ++di) {
    const DeviceOps& d = r.devices[di];
    if (di) out += ", ";
    out += fmt::format(
        "{{\"device\": {}, \"host\": {}, \"busy_ns\": {}, \"span_ns\": {}, \"events\": {}, "
        "\"selected_events\": {}, \"set_apart\": {}, \"groups\": [",
        json_string(d.device), json_string(d.host), ps_to_ns_exact(d.busy_ps),
        ps_to_ns_exact(d.span_ps), d.events, d.selected, d.set_apart);
    for (size_t gi = 0; gi < d.groups.size(); ++gi) {
      const OpGroup& g = d.groups[gi];
      if (gi) out += ", ";
      out += fmt::format(
          "{{\"name\": {}, \"count\": {}, \"total_ns\": {}, \"self_ns\": {}, \"mean_ns\": {}, "
          "\"min_ns\": {}, \"max_ns\": {}, \"std_ns\": {}, \"share\": {}",
          json_string(g.name), g.count, ps_to_ns_exact(g.total_ps), ps_to_ns_exact(g.self_ps),
          ps_to_ns(g.mean_ps), ps_to_ns_exact(g.min_ps), ps_to_ns_exact(g.max_ps),
          ps_to_ns(g.std_ps), number(g.share));
      if (shows_module(r.group_by)) out += ", \"module\": " + json_string(g.module);
      if (r.group_by == GroupBy::kModule)
        out += ", \"program_id\": " +
               (g.program_id == kNoProgram ? std::string("null") : std::to_string(g.program_id));
      if (shows_hlo(r.group_by)) {
        out +=
            ", \"opcode\": " + json_string(g.opcode) + ", \"op_name\": " + json_string(g.op_name) +
            ", \"source\": " + json_string(g.source) + ", \"category\": " + json_string(g.category);
      }
      out += "}";
    }
    out += "]}";
  }
  out += "], \"warnings\": [";
  for (size_t i = 0; i < r.warnings.size(); ++i)
    out += (i ? ", " : "") + json_string(r.warnings[i]);
  out += "]}\n";
  return out;
}

std::string csv(const OpsResult& r) {
  std::string out = "device,host,name";
  if (shows_module(r.group_by)) out += ",module";
  if (r.group_by == GroupBy::kModule) out += ",program_id";
  out += ",count,total_ns,self_ns,mean_ns,min_ns,max_ns,std_ns,share";
  if (shows_hlo(r.group_by)) out += ",opcode,op_name,source,category";
  out += "\n";
  for (const DeviceOps& d : r.devices) {
    for (const OpGroup& g : d.groups) {
      out += fmt::format("{},{},{}", csv_field(d.device), csv_field(d.host), csv_field(g.name));
      if (shows_module(r.group_by)) out += fmt::format(",{}", csv_field(g.module));
      if (r.group_by == GroupBy::kModule)
        out += fmt::format(
            ",{}", g.program_id == kNoProgram ? std::string() : std::to_string(g.program_id));
      out += fmt::format(",{},{},{},{},{},{},{},{}", g.count, ps_to_ns_exact(g.total_ps),
                         ps_to_ns_exact(g.self_ps), ps_to_ns(g.mean_ps), ps_to_ns_exact(g.min_ps),
                         ps_to_ns_exact(g.max_ps), ps_to_ns(g.std_ps), number(g.share));
      if (shows_hlo(r.group_by))
        out += fmt::format(",{},{},{},{}", csv_field(g.opcode), csv_field(g.op_name),
                           csv_field(g.source), csv_field(g.category));
      out += "\n";
    }
  }
  return out;
}

std::string table(const OpsResult& r) {
  std::string out;
  for (const DeviceOps& d : r.devices) {
    out += fmt::format("{} ({})  busy {}  span {}  {} op events", d.device, d.host,
                       human_duration(static_cast<double>(d.busy_ps)),
                       human_duration(static_cast<double>(d.span_ps)), d.events);
    if (d.selected != d.events) out += fmt::format(", {} selected", d.selected);
    out += "\n";
    std::vector<std::string> header = {group_by_name(r.group_by)};
    std::vector<bool> numeric = {false};
    if (shows_hlo(r.group_by)) {
      header.insert(header.end(), {"opcode", "module"});
      numeric.insert(numeric.end(), {false, false});
    }
    if (r.group_by == GroupBy::kModule) {
      header.push_back("program");
      numeric.push_back(true);
    }
    for (const char* h : {"count", "total", "self", "mean", "min", "max", "std", "share"}) {
      header.push_back(h);
      numeric.push_back(true);
    }
    if (shows_hlo(r.group_by)) {
      header.insert(header.end(), {"op_name", "source"});
      numeric.insert(numeric.end(), {false, false});
    }
    Table t(header, numeric);
    for (const OpGroup& g : d.groups) {
      std::vector<std::string> row = {g.name};
      if (shows_hlo(r.group_by)) row.insert(row.end(), {g.opcode, g.module});
      if (r.group_by == GroupBy::kModule)
        row.push_back(g.program_id == kNoProgram ? "" : std::to_string(g.program_id));
      row.insert(row.end(),
                 {std::to_string(g.count), human_duration(static_cast<double>(g.total_ps)),
                  human_duration(static_cast<double>(g.self_ps)), human_duration(g.mean_ps),
                  human_duration(static_cast<double>(g.min_ps)),
                  human_duration(static_cast<double>(g.max_ps)), human_duration(g.std_ps),
                  human_percent(g.share)});
      if (shows_hlo(r.group_by)) row.insert(row.end(), {g.op_name, g.source});
      t.add(std::move(row));
    }
    out += t.render(60) + "\n";
  }
  if (r.devices.empty())
    out += "no device op events found (try `jaxprof info` to see what the profile holds)\n";
  return out;
}

}  // namespace

std::string render_ops(const OpsResult& result, OutputFormat format) {
  return render_in(format, result, json, csv, table);
}

}  // namespace jaxprof
