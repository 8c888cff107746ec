#include "jaxprof/render/text/timeline_render.h"

#include <fmt/format.h>

#include "jaxprof/common/units.h"

namespace jaxprof {

namespace {

// Field names shared by JSON and CSV, in output order.
constexpr const char* kFields[] = {"span_ns",
                                   "busy_ns",
                                   "compute_ns",
                                   "comm_ns",
                                   "comm_exposed_ns",
                                   "memcpy_ns",
                                   "memcpy_exposed_ns",
                                   "idle_ns",
                                   "idle_in_modules_ns",
                                   "idle_between_modules_ns",
                                   "set_apart_ns"};

std::vector<int64_t> values(const DeviceTimeline& t) {
  return {t.span_ps,
          t.busy_ps,
          t.compute_ps,
          t.comm_ps,
          t.comm_exposed_ps,
          t.memcpy_ps,
          t.memcpy_exposed_ps,
          t.idle_ps,
          t.idle_in_modules_ps,
          t.idle_between_modules_ps,
          t.set_apart_ps};
}

std::vector<double> values(const TimelineAverage& a) {
  return {a.span_ps,
          a.busy_ps,
          a.compute_ps,
          a.comm_ps,
          a.comm_exposed_ps,
          a.memcpy_ps,
          a.memcpy_exposed_ps,
          a.idle_ps,
          a.idle_in_modules_ps,
          a.idle_between_modules_ps,
          a.set_apart_ps};
}

std::string json(const TimelineResult& r) {
  std::string out = "{\"devices\": [";
  for (size_t di = 0; di < r.devices.size(); ++di) {
    const DeviceTimeline& t = r.devices[di];
    out += fmt::format("{}{{\"device\": {}, \"host\": {}, \"events\": {}, \"executions\": {}",
                       di ? ", " : "", json_string(t.device), json_string(t.host), t.events,
                       t.executions);
    std::vector<int64_t> v = values(t);
    for (size_t i = 0; i < v.size(); ++i)
      out += fmt::format(", \"{}\": {}", kFields[i], ps_to_ns_exact(v[i]));
    out += "}";
  }
  out += "], \"average\": {";
  out += fmt::format("\"devices\": {}", r.devices.size());
  std::vector<double> a = values(r.average);
  for (size_t i = 0; i < a.size(); ++i)
    out += fmt::format(", \"{}\": {}", kFields[i], ps_to_ns(a[i]));
  out += "}}\n";
  return out;
}

std::string csv(const TimelineResult& r) {
  std::string out = "device,host,events,executions";
  for (const char* f : kFields) out += fmt::format(",{}", f);
  out += "\n";
  for (const DeviceTimeline& t : r.devices) {
    out +=
        fmt::format("{},{},{},{}", csv_field(t.device), csv_field(t.host), t.events, t.executions);
    for (int64_t v : values(t)) out += fmt::format(",{}", ps_to_ns_exact(v));
    out += "\n";
  }
  return out;
}

std::string share(double part, double whole) {
  return whole > 0 ? human_percent(part / whole) : "";
}

std::string table(const TimelineResult& r) {
  if (r.devices.empty())
    return "no device op events found (try `jaxprof info` to see what the profile holds)\n";
  bool set_apart = false;
  for (const DeviceTimeline& d : r.devices) set_apart |= d.set_apart_ps > 0;
  std::vector<TableColumn> columns = {{"device"}, {"span", Measure::kDuration}};
  if (set_apart) columns.push_back({"set apart", Measure::kDuration});
  for (const char* h :
       {"compute", "comm exposed", "memcpy exposed", "idle", "idle in modules", "idle between",
        "comm total", "comm hidden", "memcpy total"})
    columns.push_back({h, Measure::kDuration});
  Table t(std::move(columns));
  auto row = [&](const std::string& name, const std::vector<double>& v) {
    double span = v[0];
    // Parts of the span also say their share of it.
    auto part = [&](double x) {
      return span > 0 && x != 0 ? Cell(x).then(fmt::format("({})", share(x, span))) : Cell(x);
    };
    std::vector<Cell> cells = {name,    span,    part(v[2]), part(v[4]),  part(v[6]), part(v[7]),
                               part(v[8]), part(v[9]), v[3], v[3] - v[4], v[5]};
    if (set_apart) cells.insert(cells.begin() + 2, part(v[10]));
    t.add(std::move(cells));
  };
  for (const DeviceTimeline& d : r.devices) {
    std::vector<double> v;
    for (int64_t x : values(d)) v.push_back(static_cast<double>(x));
    row(d.device, v);
  }
  if (r.devices.size() > 1) row("average", values(r.average));
  return t.render(40) + "\ncompute + comm exposed + memcpy exposed + idle" +
         (set_apart ? " + set apart" : "") + " = span (see docs/timeline.md)\n";
}

}  // namespace

std::string render_timeline(const TimelineResult& result, OutputFormat format) {
  return render_in(format, result, json, csv, table);
}

}  // namespace jaxprof
