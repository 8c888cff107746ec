#include "jaxprof/render/text/kernels_render.h"

#include <fmt/format.h>

#include "jaxprof/common/units.h"

namespace jaxprof {

namespace {

template <typename T>
std::string json_opt(const std::optional<T>& v) {
  if (!v) return "null";
  if constexpr (std::is_floating_point_v<T>) return number(*v);
  return std::to_string(*v);
}

std::string json_dim3(const std::optional<std::array<int64_t, 3>>& d) {
  if (!d) return "null";
  return fmt::format("[{}, {}, {}]", (*d)[0], (*d)[1], (*d)[2]);
}

template <typename T>
std::string text_opt(const std::optional<T>& v) {
  if (!v) return "";
  if constexpr (std::is_floating_point_v<T>) return number(*v);
  return std::to_string(*v);
}

std::string json(const KernelsResult& r) {
  std::string out = "{\"devices\": [";
  for (size_t i = 0; i < r.devices.size(); ++i) out += (i ? ", " : "") + json_string(r.devices[i]);
  out += fmt::format("], \"kernel_events\": {}, \"total_ns\": {}, \"message\": {}, \"kernels\": [",
                     r.kernel_events, ps_to_ns_exact(r.total_ps),
                     r.no_gpu_reason.empty() ? "null" : json_string(r.no_gpu_reason));
  for (size_t ki = 0; ki < r.kernels.size(); ++ki) {
    const KernelGroup& k = r.kernels[ki];
    if (ki) out += ", ";
    out += fmt::format(
        "{{\"name\": {}, \"count\": {}, \"total_ns\": {}, \"mean_ns\": {}, \"min_ns\": {}, "
        "\"max_ns\": {}, \"share\": {}, \"devices\": {}, \"hlo_op\": {}, \"module\": {}, "
        "\"op_name\": {}, \"hlo_ops\": {}, \"configs\": [",
        json_string(k.name), k.count, ps_to_ns_exact(k.total_ps), ps_to_ns(k.mean_ps),
        ps_to_ns_exact(k.min_ps), ps_to_ns_exact(k.max_ps),
        number(r.total_ps > 0 ? static_cast<double>(k.total_ps) / static_cast<double>(r.total_ps)
                              : 0.0),
        k.devices, json_string(k.hlo_op), json_string(k.module), json_string(k.op_name), k.hlo_ops);
    for (size_t ci = 0; ci < k.configs.size(); ++ci) {
      const KernelConfig& c = k.configs[ci];
      const KernelDetails& d = c.parsed;
      if (ci) out += ", ";
      out += fmt::format(
          "{{\"count\": {}, \"total_ns\": {}, \"grid\": {}, \"block\": {}, \"registers\": {}, "
          "\"static_shared_bytes\": {}, \"dynamic_shared_bytes\": {}, \"shared_bytes\": {}, "
          "\"private_bytes\": {}, \"occupancy_pct\": {}, \"kernel_details\": {}}}",
          c.count, ps_to_ns_exact(c.total_ps), json_dim3(d.grid), json_dim3(d.block),
          json_opt(d.registers), json_opt(d.static_shared), json_opt(d.dynamic_shared),
          json_opt(d.shared_bytes()), json_opt(d.private_mem), json_opt(d.occupancy_pct),
          json_string(c.details));
    }
    out += "]}";
  }
  out += "], \"warnings\": " + json_string_array(r.warnings);
  return out + "}\n";
}

// One row per (kernel, launch configuration).
std::string csv(const KernelsResult& r) {
  std::string out =
      "name,count,total_ns,mean_ns,min_ns,max_ns,devices,hlo_op,module,op_name,config_count,"
      "config_total_ns,grid,block,registers,static_shared_bytes,dynamic_shared_bytes,shared_bytes,"
      "private_bytes,occupancy_pct,kernel_details\n";
  for (const KernelGroup& k : r.kernels) {
    for (const KernelConfig& c : k.configs) {
      const KernelDetails& d = c.parsed;
      out += fmt::format(
          "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", csv_field(k.name),
          k.count, ps_to_ns_exact(k.total_ps), ps_to_ns(k.mean_ps), ps_to_ns_exact(k.min_ps),
          ps_to_ns_exact(k.max_ps), k.devices, csv_field(k.hlo_op), csv_field(k.module),
          csv_field(k.op_name), c.count, ps_to_ns_exact(c.total_ps),
          csv_field(d.grid ? dim3_string(*d.grid) : ""),
          csv_field(d.block ? dim3_string(*d.block) : ""), text_opt(d.registers),
          text_opt(d.static_shared), text_opt(d.dynamic_shared), text_opt(d.shared_bytes()),
          text_opt(d.private_mem), text_opt(d.occupancy_pct), csv_field(c.details));
    }
  }
  return out;
}

template <typename T>
Cell opt_cell(const std::optional<T>& v) {
  return v ? Cell(static_cast<double>(*v)) : Cell::unknown();
}

std::string table(const KernelsResult& r) {
  if (!r.no_gpu_reason.empty()) return r.no_gpu_reason + "\n";
  std::string out = fmt::format("{} kernel launches on {} GPU{}, {} in all\n", r.kernel_events,
                                r.devices.size(), r.devices.size() == 1 ? "" : "s",
                                human_duration(static_cast<double>(r.total_ps)));
  Table t({{"kernel"},
           {"count", Measure::kCount},
           {"total", Measure::kDuration},
           {"mean", Measure::kDuration},
           {"min", Measure::kDuration},
           {"max", Measure::kDuration},
           {"share", Measure::kShare},
           {"grid", Measure::kLabel},
           {"block", Measure::kLabel},
           {"regs", Measure::kCount},
           {"shared", Measure::kBytes},
           {"occupancy", Measure::kPercent},
           {"hlo_op"},
           {"op_name"}});
  for (const KernelGroup& k : r.kernels) {
    // The configuration with the most time; "+n" when the kernel was launched several ways.
    const KernelDetails& d = k.configs.front().parsed;
    std::string more =
        k.configs.size() > 1 ? fmt::format(" +{}", k.configs.size() - 1) : std::string();
    t.add({k.name, k.count, k.total_ps, k.mean_ps, k.min_ps, k.max_ps,
           r.total_ps > 0 ? static_cast<double>(k.total_ps) / static_cast<double>(r.total_ps) : 0.0,
           (d.grid ? dim3_string(*d.grid) : std::string(kUnknownText)) + more,
           d.block ? dim3_string(*d.block) : std::string(kUnknownText), opt_cell(d.registers),
           opt_cell(d.shared_bytes()), opt_cell(d.occupancy_pct), k.hlo_op, k.op_name});
  }
  out += t.render(60);
  if (r.kernels_total > r.kernels.size())
    out += more_rows_line(r.kernels.size(), r.kernels_total, "kernels");
  out +=
      "grid/block/regs/shared/occupancy are the launch with the most time; +N: N more launch "
      "configurations (see --format json); \xe2\x80\x94: not in the profile\n";
  return out;
}

}  // namespace

std::string render_kernels(const KernelsResult& result, OutputFormat format) {
  return render_in(format, result, json, csv, table);
}

}  // namespace jaxprof
