#include "jaxprof/render/text/ops_render.h"

#include <fmt/format.h>

#include "jaxprof/common/units.h"
#include "jaxprof/render/text/clock_note.h"
#include "jaxprof/render/text/name_collisions.h"

namespace jaxprof {

namespace {

bool shows_module(GroupBy g) { return g == GroupBy::kHloOp; }
bool shows_hlo(GroupBy g) { return g == GroupBy::kHloOp; }

std::string program_text(ProgramId id) { return id == kNoProgram ? "" : std::to_string(id); }

// "[1, 2]": the programs an hlo-op group holds.
std::string program_list_json(const std::vector<ProgramId>& ids) {
  std::string out = "[";
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i) out += ", ";
    out += ids[i] == kNoProgram ? std::string("null") : std::to_string(ids[i]);
  }
  return out + "]";
}

// The table's first column: names that collide (one per program, or modules of one name) say
// what tells them apart.
std::vector<std::string> row_names(const OpsResult& r, const DeviceOps& d) {
  std::vector<std::string> labels, tellers;
  for (const OpGroup& g : d.groups) {
    labels.push_back(shows_module(r.group_by) ? g.name + "\n" + g.module : g.name);
    std::string program;
    if (r.group_by == GroupBy::kHloOp) program = program_text(g.program_id);
    tellers.push_back(program_teller(program));
  }
  std::vector<std::string> out = tell_apart(labels, tellers);
  for (size_t i = 0; i < out.size(); ++i)
    if (shows_module(r.group_by)) out[i] = d.groups[i].name + out[i].substr(labels[i].size());
  return out;
}

std::string json(const OpsResult& r) {
  std::string out = "{\"group_by\": " + json_string(group_by_name(r.group_by)) + ", \"devices\": [";
  for (size_t di = 0; di < r.devices.size(); ++di) {
    const DeviceOps& d = r.devices[di];
    if (di) out += ", ";
    out += fmt::format(
        "{{\"device\": {}, \"host\": {}, \"busy_ns\": {}, \"span_ns\": {}, \"events\": {}, "
        "\"selected_events\": {}, \"duration_clock\": {}, \"device_clock_events\": {}, "
        "\"set_apart\": {}, \"groups\": [",
        json_string(d.device), json_string(d.host), ps_to_ns_exact(d.busy_ps),
        ps_to_ns_exact(d.span_ps), d.events, d.selected,
        json_string(duration_clock_name(duration_clock(d.device_clock_events, d.events))),
        d.device_clock_events, d.set_apart);
    for (size_t gi = 0; gi < d.groups.size(); ++gi) {
      const OpGroup& g = d.groups[gi];
      if (gi) out += ", ";
      out += fmt::format(
          "{{\"name\": {}, \"count\": {}, \"total_ns\": {}, \"self_ns\": {}, \"mean_ns\": {}, "
          "\"min_ns\": {}, \"max_ns\": {}, \"std_ns\": {}, \"share\": {}",
          json_string(g.name), g.count, ps_to_ns_exact(g.total_ps), ps_to_ns_exact(g.self_ps),
          ps_to_ns(g.mean_ps), ps_to_ns_exact(g.min_ps), ps_to_ns_exact(g.max_ps),
          ps_to_ns(g.std_ps), number(g.share));
      if (shows_module(r.group_by))
        out += ", \"module\": " + json_string(g.module) +
               ", \"program_ids\": " + program_list_json(g.program_ids);
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
  out += "], \"warnings\": " + json_string_array(r.warnings);
  return out + "}\n";
}

std::string csv(const OpsResult& r) {
  std::string out = "device,host,name";
  if (shows_module(r.group_by)) out += ",module,program_ids";
  if (r.group_by == GroupBy::kModule) out += ",program_id";
  out += ",count,total_ns,self_ns,mean_ns,min_ns,max_ns,std_ns,share";
  if (shows_hlo(r.group_by)) out += ",opcode,op_name,source,category";
  out += "\n";
  for (const DeviceOps& d : r.devices) {
    for (const OpGroup& g : d.groups) {
      out += fmt::format("{},{},{}", csv_field(d.device), csv_field(d.host), csv_field(g.name));
      if (shows_module(r.group_by)) {
        std::string ids;  // space-separated
        for (size_t i = 0; i < g.program_ids.size(); ++i) {
          if (i) ids += ' ';
          if (g.program_ids[i] != kNoProgram) ids += std::to_string(g.program_ids[i]);
        }
        out += fmt::format(",{},{}", csv_field(g.module), csv_field(ids));
      }
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
    out += duration_clock_note(d.device_clock_events, d.events);
    out += "\n";
    std::vector<TableColumn> columns = {{group_by_name(r.group_by)}};
    if (shows_hlo(r.group_by)) columns.insert(columns.end(), {{"opcode"}, {"module"}});
    if (r.group_by == GroupBy::kModule) columns.push_back({"program", Measure::kLabel});
    columns.push_back({"count", Measure::kCount});
    for (const char* h : {"total", "self", "mean", "min", "max", "std"})
      columns.push_back({h, Measure::kDuration});
    columns.push_back({"share", Measure::kShare});
    if (shows_hlo(r.group_by)) columns.insert(columns.end(), {{"op_name"}, {"source"}});
    Table t(std::move(columns));
    const std::vector<std::string> names = row_names(r, d);
    for (size_t gi = 0; gi < d.groups.size(); ++gi) {
      const OpGroup& g = d.groups[gi];
      std::vector<Cell> row = {names[gi]};
      if (shows_hlo(r.group_by)) row.insert(row.end(), {g.opcode, g.module});
      if (r.group_by == GroupBy::kModule)
        row.push_back(g.program_id == kNoProgram ? Cell::unknown() : Cell::id(g.program_id));
      row.insert(row.end(), {g.count, g.total_ps, g.self_ps, g.mean_ps, g.min_ps, g.max_ps,
                             g.std_ps, g.share});
      if (shows_hlo(r.group_by)) row.insert(row.end(), {g.op_name, g.source});
      t.add(std::move(row));
    }
    out += t.render(60);
    if (d.groups_total > d.groups.size())
      out += more_rows_line(d.groups.size(), d.groups_total,
                            std::string(group_by_name(r.group_by)) + " groups");
    out += "\n";
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
