#include "jaxprof/render/text/hosts_render.h"

#include <fmt/format.h>

#include "jaxprof/common/units.h"

namespace jaxprof {

namespace {

std::string ns_or_null(const std::optional<int64_t>& ps) {
  return ps ? ps_to_ns_exact(*ps) : "null";
}

std::string json(const HostsResult& r) {
  std::string out = fmt::format(
      "{{\"step_source\": {}, \"median_step_ns\": {}, \"mad_step_ns\": {}, \"instances\": {}, "
      "\"hosts\": [",
      json_string(r.step_source), ps_to_ns(r.median_step_ps), ps_to_ns(r.mad_step_ps), r.instances);
  for (size_t i = 0; i < r.hosts.size(); ++i) {
    const HostRow& h = r.hosts[i];
    out += fmt::format(
        "{}{{\"rank\": {}, \"host\": {}, \"devices\": {}, \"steps\": {}, \"step_mean_ns\": {}, "
        "\"step_median_ns\": {}, \"step_p90_ns\": {}, \"step_max_ns\": {}, \"step_score\": {}, "
        "\"slow\": {}, \"span_ns\": {}, \"busy_ns\": {}, \"idle_ns\": {}, "
        "\"idle_between_modules_ns\": {}, \"idle_share\": {}, \"host_bound_share\": {}, "
        "\"collectives\": {}, \"arrived_last\": {}, \"late_ns\": {}, \"wait_caused_ns\": {}, "
        "\"waited_ns\": {}, \"clock_offset_ns\": {}, \"clock_offset_error_ns\": {}}}",
        i ? ", " : "", h.rank, json_string(h.host), h.devices, h.steps, ps_to_ns(h.step_mean_ps),
        ps_to_ns(h.step_median_ps), ps_to_ns(h.step_p90_ps), ps_to_ns(h.step_max_ps),
        h.step_score ? fmt::format("{}", *h.step_score) : "null", h.slow ? "true" : "false",
        ps_to_ns_exact(h.span_ps), ps_to_ns_exact(h.busy_ps), ps_to_ns_exact(h.idle_ps),
        ps_to_ns_exact(h.idle_between_modules_ps), h.idle_share, h.host_bound_share, h.collectives,
        h.arrived_last, ps_to_ns_exact(h.late_ps), ps_to_ns_exact(h.wait_caused_ps),
        ps_to_ns_exact(h.waited_ps), ns_or_null(h.clock_offset_ps),
        ns_or_null(h.clock_offset_error_ps));
  }
  out += "], \"notes\": [";
  for (size_t i = 0; i < r.notes.size(); ++i)
    out += fmt::format("{}{}", i ? ", " : "", json_string(r.notes[i]));
  out += "]}\n";
  return out;
}

std::string csv(const HostsResult& r) {
  std::string out =
      "rank,host,devices,steps,step_median_ns,step_p90_ns,step_score,slow,idle_share,"
      "host_bound_share,collectives,arrived_last,late_ns,wait_caused_ns,waited_ns,"
      "clock_offset_ns,clock_offset_error_ns\n";
  for (const HostRow& h : r.hosts)
    out += fmt::format(
        "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", h.rank, csv_field(h.host),
        h.devices, h.steps, ps_to_ns(h.step_median_ps), ps_to_ns(h.step_p90_ps),
        h.step_score ? fmt::format("{}", *h.step_score) : "", h.slow ? "true" : "false",
        h.idle_share, h.host_bound_share, h.collectives, h.arrived_last, ps_to_ns_exact(h.late_ps),
        ps_to_ns_exact(h.wait_caused_ps), ps_to_ns_exact(h.waited_ps),
        h.clock_offset_ps ? ps_to_ns_exact(*h.clock_offset_ps) : "",
        h.clock_offset_error_ps ? ps_to_ns_exact(*h.clock_offset_error_ps) : "");
  return out;
}

std::string table(const HostsResult& r, size_t top) {
  Table t({{"rank", Measure::kCount},
           {"host"},
           {"steps", Measure::kCount},
           {"median step", Measure::kDuration},
           {"p90", Measure::kDuration},
           {"score", Measure::kNumber},
           {"late by", Measure::kDuration},
           {"last at", Measure::kLabel},
           {"others waited", Measure::kDuration},
           {"waited", Measure::kDuration},
           {"idle", Measure::kShare},
           {"host-bound", Measure::kShare},
           {"clock offset", Measure::kDuration, true}});
  auto known_if = [](bool known, double v) { return known ? Cell(v) : Cell::unknown(); };
  size_t shown = 0;
  for (const HostRow& h : r.hosts) {
    if (top > 0 && shown++ >= top) break;
    t.add({h.rank, h.host + (h.slow ? " (slow)" : ""), h.steps,
           known_if(h.steps > 0, h.step_median_ps), known_if(h.steps > 0, h.step_p90_ps),
           h.step_score ? Cell(*h.step_score) : Cell::unknown(),
           known_if(h.collectives > 0, static_cast<double>(h.late_ps)),
           h.collectives ? fmt::format("{}/{}", h.arrived_last, h.collectives) : "—",
           static_cast<double>(h.wait_caused_ps), static_cast<double>(h.waited_ps),
           known_if(h.span_ps > 0, h.idle_share), known_if(h.span_ps > 0, h.host_bound_share),
           h.clock_offset_ps ? Cell(static_cast<double>(*h.clock_offset_ps)) : Cell::unknown()});
  }
  std::string out = fmt::format(
      "{} host{}; step times from {}: median {} (MAD {}); {} collective instances across "
      "hosts\n\n",
      r.hosts.size(), r.hosts.size() == 1 ? "" : "s", r.step_source,
      human_duration(r.median_step_ps), human_duration(r.mad_step_ps), r.instances);
  out += t.render(40);
  if (top > 0 && r.hosts.size() > top) out += more_rows_line(top, r.hosts.size(), "hosts");
  for (const std::string& n : r.notes) out += "note: " + n + "\n";
  return out;
}

}  // namespace

std::string render_hosts(const HostsResult& result, OutputFormat format, size_t top) {
  return render_in(format, result, json, csv,
                   [top](const HostsResult& r) { return table(r, top); });
}

}  // namespace jaxprof
