#include "jaxprof/render/text/roofline_render.h"

#include <fmt/format.h>

#include <cmath>
#include <map>
#include <set>

#include "jaxprof/common/units.h"

namespace jaxprof {

namespace {

constexpr ComputeType kTypes[] = {ComputeType::kVector, ComputeType::kFp64, ComputeType::kFp32,
                                  ComputeType::kTf32,   ComputeType::kBf16, ComputeType::kFp16,
                                  ComputeType::kFp8,    ComputeType::kInt8};

std::string opt_u(const std::optional<uint64_t>& v) {
  return v ? std::to_string(*v) : std::string("null");
}
std::string opt_d(const std::optional<double>& v) {
  return v && std::isfinite(*v) ? number(*v) : std::string("null");
}
std::string opt_ns(const std::optional<int64_t>& v) {
  return v ? ps_to_ns_exact(*v) : std::string("null");
}
std::string csv_u(const std::optional<uint64_t>& v) { return v ? std::to_string(*v) : ""; }
std::string csv_d(const std::optional<double>& v) {
  return v && std::isfinite(*v) ? number(*v) : "";
}
std::string csv_ns(const std::optional<int64_t>& v) { return v ? ps_to_ns_exact(*v) : ""; }
std::string program(ProgramId id) {
  return id == kNoProgram ? std::string("null") : std::to_string(id);
}

// The figures' JSON members (after an opening brace and other members).
std::string figures_json(const RooflineFigures& f) {
  return fmt::format(
      "\"total_ns\": {}, \"flops\": {}, \"bytes_accessed\": {}, \"transcendentals\": {}, "
      "\"model_flops\": {}, \"flop_rate\": {}, \"bandwidth\": {}, \"intensity\": {}, "
      "\"attainable_flop_rate\": {}, \"efficiency\": {}, \"predicted_ns\": {}, "
      "\"model_error\": {}, \"bound\": {}",
      ps_to_ns_exact(f.time_ps), opt_u(f.flops), opt_u(f.bytes_accessed), opt_u(f.transcendentals),
      opt_u(f.model_flops), opt_d(f.flop_rate), opt_d(f.bandwidth), opt_d(f.intensity),
      opt_d(f.attainable_flop_rate), opt_d(f.efficiency), opt_ns(f.predicted_ps),
      opt_d(f.model_error), json_string(bound_name(f.bound)));
}

// One source for the whole peaks object when every figure shares it.
std::string peaks_source(const DevicePeaks& p) {
  std::string one;
  bool mixed = false;
  auto see = [&](const std::string& s) {
    if (s.empty()) return;
    if (one.empty()) {
      one = s;
    } else if (one != s) {
      mixed = true;
    }
  };
  for (const std::string& s : p.flops_source) see(s);
  see(p.bytes_source);
  if (one.empty()) return "unknown";
  return mixed ? "mixed" : one;
}

std::string peaks_json(const DevicePeaks& p) {
  std::string rates, sources;
  for (ComputeType t : kTypes) {
    const auto i = static_cast<size_t>(t);
    if (!rates.empty()) rates += ", ";
    rates += json_string(compute_type_name(t)) + ": " +
             (p.flops_per_s[i] > 0 ? number(p.flops_per_s[i]) : std::string("null"));
    if (p.flops_per_s[i] > 0) {
      if (!sources.empty()) sources += ", ";
      sources += json_string(compute_type_name(t)) + ": " + json_string(p.flops_source[i]);
    }
  }
  std::string notes;
  for (size_t i = 0; i < p.notes.size(); ++i) notes += (i ? ", " : "") + json_string(p.notes[i]);
  return fmt::format(
      "{{\"model\": {}, \"flops_per_s\": {{{}}}, \"flops_source\": {{{}}}, \"bytes_per_s\": {}, "
      "\"bytes_source\": {}, \"source\": {}, \"notes\": [{}]}}",
      p.model.empty() ? "null" : json_string(p.model), rates, sources,
      p.bytes_per_s > 0 ? number(p.bytes_per_s) : "null",
      p.bytes_source.empty() ? "null" : json_string(p.bytes_source), json_string(peaks_source(p)),
      notes);
}

std::string json(const RooflineResult& r) {
  std::string out =
      fmt::format("{{\"latency_floor_ns\": {}, \"devices\": [", ps_to_ns_exact(r.latency_floor_ps));
  for (size_t di = 0; di < r.devices.size(); ++di) {
    const RooflineDevice& d = r.devices[di];
    if (di) out += ", ";
    const RooflineCoverage& c = d.coverage;
    out += fmt::format(
        "{{\"device\": {}, \"host\": {}, \"peaks\": {}, \"coverage\": {{\"total_ns\": {}, "
        "\"known_ns\": {}, \"share\": {}, \"by_source_ns\": {{",
        json_string(d.device), json_string(d.host), peaks_json(d.peaks), ps_to_ns_exact(c.total_ps),
        ps_to_ns_exact(c.known_ps), number(c.share()));
    for (int s = 0; s < 5; ++s)
      out += fmt::format("{}{}: {}", s ? ", " : "",
                         json_string(cost_source_name(static_cast<CostSource>(s))),
                         ps_to_ns_exact(c.by_source_ps[s]));
    out += fmt::format("}}, \"unknown_ops\": {}}}, \"total\": {{{}}}, \"programs\": [",
                       c.unknown_ops, figures_json(d.total));
    for (size_t pi = 0; pi < d.programs.size(); ++pi) {
      const RooflineProgram& pr = d.programs[pi];
      out +=
          fmt::format("{}{{\"module\": {}, \"program_id\": {}, \"ops\": {}, \"known_ns\": {}, {}}}",
                      pi ? ", " : "", json_string(pr.module), program(pr.program_id), pr.ops,
                      ps_to_ns_exact(pr.known_ps), figures_json(pr.figures));
    }
    out += "], \"ops\": [";
    for (size_t oi = 0; oi < d.ops.size(); ++oi) {
      const RooflineOp& o = d.ops[oi];
      out += fmt::format(
          "{}{{\"name\": {}, \"module\": {}, \"program_id\": {}, \"category\": {}, \"opcode\": {}, "
          "\"count\": {}, \"self_ns\": {}, \"source\": {}, \"detail\": {}, \"compute_type\": {}, "
          "\"peak_type\": {}, \"peak_flops_per_s\": {}, \"nested_ops\": {}, {}}}",
          oi ? ", " : "", json_string(o.name), json_string(o.module), program(o.program_id),
          json_string(o.category), json_string(o.opcode), o.count, ps_to_ns_exact(o.self_ps),
          json_string(cost_source_name(o.source)), json_string(o.detail),
          json_string(compute_type_name(o.compute)), json_string(compute_type_name(o.peak_type)),
          o.peak_flops_per_s > 0 ? number(o.peak_flops_per_s) : "null",
          o.has_children ? "true" : "false", figures_json(o.figures));
    }
    out += "]}";
  }
  out += "], \"warnings\": " + json_string_array(r.warnings);
  return out + "}\n";
}

std::string csv(const RooflineResult& r) {
  std::string out =
      "device,host,name,module,program_id,category,opcode,count,total_ns,self_ns,flops,"
      "bytes_accessed,transcendentals,model_flops,source,detail,compute_type,peak_type,"
      "peak_flops_per_s,flop_rate,bandwidth,intensity,attainable_flop_rate,efficiency,"
      "predicted_ns,model_error,bound\n";
  for (const RooflineDevice& d : r.devices) {
    for (const RooflineOp& o : d.ops) {
      const RooflineFigures& f = o.figures;
      out += fmt::format(
          "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n",
          csv_field(d.device), csv_field(d.host), csv_field(o.name), csv_field(o.module),
          o.program_id == kNoProgram ? std::string() : std::to_string(o.program_id),
          csv_field(o.category), csv_field(o.opcode), o.count, ps_to_ns_exact(f.time_ps),
          ps_to_ns_exact(o.self_ps), csv_u(f.flops), csv_u(f.bytes_accessed),
          csv_u(f.transcendentals), csv_u(f.model_flops), cost_source_name(o.source),
          csv_field(o.detail), compute_type_name(o.compute), compute_type_name(o.peak_type),
          o.peak_flops_per_s > 0 ? number(o.peak_flops_per_s) : "", csv_d(f.flop_rate),
          csv_d(f.bandwidth), csv_d(f.intensity), csv_d(f.attainable_flop_rate),
          csv_d(f.efficiency), csv_ns(f.predicted_ps), csv_d(f.model_error), bound_name(f.bound));
    }
  }
  return out;
}

// Table cells of optional figures: unknown (or not finite) prints "—".
Cell finite_cell(const std::optional<double>& v) {
  return v && std::isfinite(*v) ? Cell(*v) : Cell::unknown();
}
Cell count_cell(const std::optional<uint64_t>& v) {
  return v ? Cell(static_cast<double>(*v)) : Cell::unknown();
}
Cell duration_cell(const std::optional<int64_t>& ps) {
  return ps ? Cell(static_cast<double>(*ps)) : Cell::unknown();
}
std::optional<double> gbps(const std::optional<double>& bytes_per_s) {
  return bytes_per_s ? std::optional<double>(*bytes_per_s / 1e9) : std::nullopt;
}

std::string peaks_line(const DevicePeaks& p) {
  std::string out = "  peaks: ";
  out += p.model.empty() ? "(device not identified)" : p.model;
  ComputeType used;
  for (ComputeType t : {ComputeType::kBf16, ComputeType::kFp32}) {
    const double v = p.flops_for(t, used);
    if (v > 0 && used == t)
      out += fmt::format(", {} {}", compute_type_name(t), format_value(Measure::kFlopRate, v));
  }
  out += ", memory " + format_value(Measure::kBandwidth,
                                    p.bytes_per_s > 0 ? std::optional<double>(p.bytes_per_s / 1e9)
                                                      : std::nullopt);
  out += "\n";
  // Where each figure came from, grouped.
  std::vector<std::pair<std::string, std::string>> by_source;  // source -> what
  auto add = [&](const std::string& source, const std::string& what) {
    if (source.empty()) return;
    for (auto& [s, w] : by_source)
      if (s == source) {
        w += ", " + what;
        return;
      }
    by_source.emplace_back(source, what);
  };
  for (ComputeType t : kTypes)
    if (p.flops_per_s[static_cast<size_t>(t)] > 0)
      add(p.flops_source[static_cast<size_t>(t)], compute_type_name(t));
  add(p.bytes_source, "memory");
  for (const auto& [s, w] : by_source) out += "    " + w + ": " + s + "\n";
  return out;
}

std::string table(const RooflineResult& r, size_t top) {
  std::string out;
  for (const RooflineDevice& d : r.devices) {
    const RooflineCoverage& c = d.coverage;
    out += fmt::format("{} ({})  op time {}  with FLOPs and bytes: {}", d.device, d.host,
                       human_duration(static_cast<double>(c.total_ps)), human_percent(c.share()));
    std::string sources;
    for (int s = 0; s < 5; ++s) {
      if (c.by_source_ps[s] == 0 || s == static_cast<int>(CostSource::kUnknown)) continue;
      sources += fmt::format("{}{} {}", sources.empty() ? "" : ", ",
                             cost_source_name(static_cast<CostSource>(s)),
                             human_percent(static_cast<double>(c.by_source_ps[s]) /
                                           static_cast<double>(std::max<int64_t>(c.total_ps, 1))));
    }
    if (!sources.empty()) out += " (" + sources + ")";
    if (c.unknown_ops) out += fmt::format(", {} ops unknown", c.unknown_ops);
    out += '\n';
    out += peaks_line(d.peaks);
    Table t({{"hlo-op"},
             {"module"},
             {"category"},
             {"count", Measure::kCount},
             {"total", Measure::kDuration},
             {"FLOPs", Measure::kFlops},
             {"bytes", Measure::kBytes},
             {"FLOP rate", Measure::kFlopRate},
             {"bandwidth", Measure::kBandwidth},
             {"FLOP/B", Measure::kNumber},
             {"bound"},
             {"eff", Measure::kShare},
             {"predicted", Measure::kDuration},
             {"source"}});
    // Module names several programs share are told apart by program id: "jit_dot(49)".
    std::map<std::string, std::set<ProgramId>> ids;
    for (const RooflineProgram& p : d.programs) ids[p.module].insert(p.program_id);
    auto module_label = [&](const std::string& m, ProgramId id) {
      if (ids[m].size() < 2 || id == kNoProgram) return m;
      return m + "(" + std::to_string(id) + ")";
    };
    size_t listed = 0;
    for (const RooflineOp& o : d.ops) {
      if (top && listed++ >= top) break;
      const RooflineFigures& f = o.figures;
      t.add({o.name, module_label(o.module, o.program_id), o.category, o.count,
             static_cast<double>(f.time_ps), count_cell(f.flops), count_cell(f.bytes_accessed),
             finite_cell(f.flop_rate), finite_cell(gbps(f.bandwidth)), finite_cell(f.intensity),
             bound_name(f.bound), finite_cell(f.efficiency), duration_cell(f.predicted_ps),
             cost_source_name(o.source)});
    }
    out += t.render(48);
    if (top && d.ops.size() > top) out += more_rows_line(top, d.ops.size(), "ops");
    out += "\n";
    Table pt({{"program"},
              {"id", Measure::kLabel},
              {"ops", Measure::kCount},
              {"time", Measure::kDuration},
              {"known", Measure::kShare},
              {"FLOPs", Measure::kFlops},
              {"bytes", Measure::kBytes},
              {"FLOP rate", Measure::kFlopRate},
              {"bandwidth", Measure::kBandwidth},
              {"bound"},
              {"eff", Measure::kShare},
              {"predicted", Measure::kDuration}});
    auto program_row = [&](const std::string& name, const std::string& id, uint64_t ops,
                           int64_t known_ps, const RooflineFigures& f) {
      pt.add({name, id, ops, static_cast<double>(f.time_ps),
              f.time_ps > 0 ? Cell(static_cast<double>(known_ps) / static_cast<double>(f.time_ps))
                            : Cell::unknown(),
              count_cell(f.flops), count_cell(f.bytes_accessed), finite_cell(f.flop_rate),
              finite_cell(gbps(f.bandwidth)), bound_name(f.bound), finite_cell(f.efficiency),
              duration_cell(f.predicted_ps)});
    };
    for (const RooflineProgram& p : d.programs)
      program_row(p.module.empty() ? "(no module)" : p.module,
                  p.program_id == kNoProgram ? "" : std::to_string(p.program_id), p.ops, p.known_ps,
                  p.figures);
    uint64_t ops = 0;
    for (const RooflineProgram& p : d.programs) ops += p.ops;
    program_row("(device)", "", ops, c.known_ps, d.total);
    out += pt.render(48) + "\n";
  }
  if (r.devices.empty())
    out += "no device op events found (try `jaxprof info` to see what the profile holds)\n";
  return out;
}

}  // namespace

std::string render_roofline(const RooflineResult& result, OutputFormat format, size_t top) {
  return render_in(format, result, json, csv,
                   [top](const RooflineResult& r) { return table(r, top); });
}

}  // namespace jaxprof
