#include "jaxprof/render/text/collectives_render.h"

#include <fmt/format.h>

#include "jaxprof/render/text/name_collisions.h"
#include "jaxprof/common/units.h"

namespace jaxprof {

namespace {

// Bandwidth is unknown (null) when the message size is.
std::string json_bw(double v, uint64_t bytes) { return bytes == 0 ? "null" : number(v); }

std::string json_traits(const CollectiveTraits& t) {
  return fmt::format("\"size_correction\": {}, \"bus_factor\": {}", number(t.size_correction),
                     number(t.bus_factor));
}

std::string json(const CollectivesResult& r) {
  std::string out = "{\"bandwidth_convention\": " + json_string(r.convention) + ", \"ops\": [";
  for (size_t i = 0; i < r.ops.size(); ++i) {
    const CollectiveOp& o = r.ops[i];
    if (i) out += ", ";
    out += fmt::format(
        "{{\"module\": {}, \"program_id\": {}, \"name\": {}, \"opcode\": {}, \"async\": {}, "
        "\"group_size\": {}, \"group_size_from\": {}, \"message_bytes\": {}, \"operand_shapes\": {}, {}, "
        "\"count\": {}, \"devices\": {}, \"total_ns\": {}, \"mean_ns\": {}, \"min_ns\": {}, "
        "\"max_ns\": {}, \"exposed_ns\": {}, \"hidden_ns\": {}, \"algbw_gbps\": {}, "
        "\"busbw_gbps\": {}, \"instances\": {}, \"multi_device_instances\": {}, "
        "\"wait_total_ns\": {}, \"wait_max_ns\": {}, \"late_device\": {}, \"late_count\": {}}}",
        json_string(o.module),
        o.program_id == kNoProgram ? std::string("null") : std::to_string(o.program_id),
        json_string(o.name), json_string(o.opcode), o.async ? "true" : "false", o.group_size,
        json_string(o.group_size_from_devices ? "devices" : "replica_groups"), o.message_bytes,
        json_string(o.operand_shapes), json_traits(o.traits), o.count, o.devices,
        ps_to_ns_exact(o.total_ps), ps_to_ns(o.mean_ps), ps_to_ns_exact(o.min_ps),
        ps_to_ns_exact(o.max_ps), ps_to_ns_exact(o.exposed_ps), ps_to_ns_exact(o.hidden_ps),
        json_bw(o.algbw_gbps, o.message_bytes), json_bw(o.busbw_gbps, o.message_bytes), o.instances,
        o.multi_device_instances, ps_to_ns_exact(o.wait_total_ps), ps_to_ns_exact(o.wait_max_ps),
        o.late_device.empty() ? "null" : json_string(o.late_device), o.late_count);
  }
  out += "], \"sizes\": [";
  for (size_t i = 0; i < r.sizes.size(); ++i) {
    const CollectiveSize& s = r.sizes[i];
    if (i) out += ", ";
    out += fmt::format(
        "{{\"opcode\": {}, \"group_size\": {}, \"message_bytes\": {}, {}, \"ops\": {}, "
        "\"count\": {}, \"total_ns\": {}, \"mean_ns\": {}, \"exposed_ns\": {}, \"hidden_ns\": {}, "
        "\"algbw_gbps\": {}, \"busbw_gbps\": {}, \"wait_total_ns\": {}}}",
        json_string(s.opcode), s.group_size, s.message_bytes, json_traits(s.traits), s.ops, s.count,
        ps_to_ns_exact(s.total_ps), ps_to_ns(s.mean_ps), ps_to_ns_exact(s.exposed_ps),
        ps_to_ns_exact(s.hidden_ps), json_bw(s.algbw_gbps, s.message_bytes),
        json_bw(s.busbw_gbps, s.message_bytes), ps_to_ns_exact(s.wait_total_ps));
  }
  out += "], \"devices\": [";
  for (size_t i = 0; i < r.devices.size(); ++i) {
    const CollectiveDevice& d = r.devices[i];
    if (i) out += ", ";
    out += fmt::format(
        "{{\"device\": {}, \"host\": {}, \"executions\": {}, \"total_ns\": {}, \"exposed_ns\": {}, "
        "\"late_count\": {}}}",
        json_string(d.device), json_string(d.host), d.executions, ps_to_ns_exact(d.total_ps),
        ps_to_ns_exact(d.exposed_ps), d.late_count);
  }
  out += fmt::format(
      "], \"multi_device_instances\": {}, \"most_late_device\": {}, "
      "\"most_late_count\": {}, \"instances\": [",
      r.multi_device_instances,
      r.most_late_device.empty() ? "null" : json_string(r.most_late_device), r.most_late_count);
  for (size_t i = 0; i < r.instances.size(); ++i) {
    const CollectiveInstance& s = r.instances[i];
    if (i) out += ", ";
    out += fmt::format(
        "{{\"module\": {}, \"name\": {}, \"run_id\": {}, \"index\": {}, \"devices\": {}, "
        "\"first_start_ns\": {}, \"last_end_ns\": {}, \"fastest_ns\": {}, \"wait_ns\": {}, "
        "\"late_device\": {}}}",
        json_string(s.module), json_string(s.name),
        s.has_run_id ? std::to_string(s.run_id) : std::string("null"), s.index, s.devices,
        ps_to_ns_exact(s.first_start_ps), ps_to_ns_exact(s.last_end_ps),
        ps_to_ns_exact(s.fastest_ps), ps_to_ns_exact(s.wait_ps),
        s.late_device.empty() ? "null" : json_string(s.late_device));
  }
  out += "], \"warnings\": " + json_string_array(r.warnings);
  return out + "}\n";
}

// One row per collective op.
std::string csv(const CollectivesResult& r) {
  std::string out =
      "module,name,opcode,async,group_size,message_bytes,size_correction,bus_factor,count,devices,"
      "total_ns,mean_ns,min_ns,max_ns,exposed_ns,hidden_ns,algbw_gbps,busbw_gbps,instances,"
      "wait_total_ns,wait_max_ns,late_device,late_count\n";
  for (const CollectiveOp& o : r.ops) {
    out += fmt::format(
        "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n",
        csv_field(o.module), csv_field(o.name), o.opcode, o.async ? "true" : "false", o.group_size,
        o.message_bytes, number(o.traits.size_correction), number(o.traits.bus_factor), o.count,
        o.devices, ps_to_ns_exact(o.total_ps), ps_to_ns(o.mean_ps), ps_to_ns_exact(o.min_ps),
        ps_to_ns_exact(o.max_ps), ps_to_ns_exact(o.exposed_ps), ps_to_ns_exact(o.hidden_ps),
        o.message_bytes ? number(o.algbw_gbps) : "", o.message_bytes ? number(o.busbw_gbps) : "",
        o.instances, ps_to_ns_exact(o.wait_total_ps), ps_to_ns_exact(o.wait_max_ps),
        csv_field(o.late_device), o.late_count);
  }
  return out;
}

// Unknown (0 in the analysis: no operand shapes) sizes and bandwidths print as unknown.
Cell size_cell(uint64_t bytes) {
  return bytes ? Cell(static_cast<double>(bytes)) : Cell::unknown();
}
Cell bw_cell(double gbps, uint64_t bytes) { return bytes ? Cell(gbps) : Cell::unknown(); }

std::string table(const CollectivesResult& r) {
  if (r.ops.empty()) return "no collective ops found\n";
  std::string out = "Collectives (bandwidth: " + r.convention + ")\n";
  Table t({{"op"},
           {"opcode"},
           {"module"},
           {"N", Measure::kLabel},
           {"size", Measure::kBytes},
           {"count", Measure::kCount},
           {"total", Measure::kDuration},
           {"mean", Measure::kDuration},
           {"exposed", Measure::kDuration},
           {"hidden", Measure::kDuration},
           {"algbw", Measure::kBandwidth},
           {"busbw", Measure::kBandwidth},
           {"wait", Measure::kDuration},
           {"late most"}});
  // Ops of programs that share a module name read alike: such rows say which program they are.
  std::vector<std::string> labels, tellers;
  for (const CollectiveOp& o : r.ops) {
    labels.push_back(o.name + "\n" + o.module);
    tellers.push_back(
        program_teller(o.program_id == kNoProgram ? "" : std::to_string(o.program_id)));
  }
  const std::vector<std::string> apart = tell_apart(labels, tellers);
  for (size_t oi = 0; oi < r.ops.size(); ++oi) {
    const CollectiveOp& o = r.ops[oi];
    std::string late = o.late_device.empty() ? ""
                                             : fmt::format("{} ({}/{})", o.late_device,
                                                           o.late_count, o.multi_device_instances);
    t.add({o.name + apart[oi].substr(labels[oi].size()), o.opcode + (o.async ? " (async)" : ""),
           o.module,
           std::to_string(o.group_size) + (o.group_size_from_devices ? "*" : ""),
           size_cell(o.message_bytes), o.count, o.total_ps, o.mean_ps, o.exposed_ps, o.hidden_ps,
           bw_cell(o.algbw_gbps, o.message_bytes), bw_cell(o.busbw_gbps, o.message_bytes),
           o.wait_total_ps, late});
  }
  out += t.render(48);
  if (r.ops_total > r.ops.size())
    out += more_rows_line(r.ops.size(), r.ops_total, "collective ops");
  out += "\nPer collective and size\n";
  Table s({{"opcode"},
           {"N", Measure::kLabel},
           {"size", Measure::kBytes},
           {"ops", Measure::kCount},
           {"count", Measure::kCount},
           {"total", Measure::kDuration},
           {"mean", Measure::kDuration},
           {"exposed", Measure::kDuration},
           {"algbw", Measure::kBandwidth},
           {"busbw", Measure::kBandwidth},
           {"bus factor", Measure::kNumber}});
  for (const CollectiveSize& z : r.sizes)
    s.add({z.opcode, std::to_string(z.group_size), size_cell(z.message_bytes), z.ops, z.count,
           z.total_ps, z.mean_ps, z.exposed_ps, bw_cell(z.algbw_gbps, z.message_bytes),
           bw_cell(z.busbw_gbps, z.message_bytes), z.traits.bus_factor});
  out += s.render(48);
  out += "\nPer device\n";
  Table d({{"device"},
           {"host"},
           {"executions", Measure::kCount},
           {"total", Measure::kDuration},
           {"exposed", Measure::kDuration},
           {"late", Measure::kCount}});
  for (const CollectiveDevice& x : r.devices)
    d.add({x.device, x.host, x.executions, x.total_ps, x.exposed_ps, x.late_count});
  out += d.render(48);
  if (!r.most_late_device.empty())
    out += fmt::format("Late most often: {} (started last in {} of {} multi-device instances)\n",
                       r.most_late_device, r.most_late_count, r.multi_device_instances);
  out +=
      "wait: per instance, last end - first start - fastest duration, summed. N*: no replica "
      "groups in the HLO, N = devices that ran it; \xe2\x80\x94: unknown (no operand shapes)\n";
  return out;
}

}  // namespace

std::string render_collectives(const CollectivesResult& result, OutputFormat format) {
  return render_in(format, result, json, csv, table);
}

}  // namespace jaxprof
