#include "jaxprof/render/html/roofline_html.h"

#include <fmt/format.h>

#include <algorithm>

#include "jaxprof/common/units.h"
#include "jaxprof/render/flame/flame_svg.h"
#include "jaxprof/render/html/roofline_svg.h"

namespace jaxprof {

RooflineHtml roofline_html(const RooflineResult& r, size_t top) {
  RooflineHtml out;
  out.empty = r.devices.empty();
  // Devices that run the same program draw near-identical charts: one at a time, with a picker
  // that also folds the table to the device (the page's script, html_report_assets.h).
  const size_t drawn = std::min(r.devices.size(), kRooflineCharts);
  if (drawn > 1) {
    out.charts +=
        "<p class=\"tools\"><label>device <select class=\"device-picker\" "
        "data-charts=\"roofline-chart\" data-targets=\"roofline-table\">";
    for (size_t i = 0; i < drawn; ++i)
      out.charts += fmt::format("<option>{}</option>", xml_escape(r.devices[i].device));
    out.charts += "</select></label></p>\n";
  }
  for (size_t i = 0; i < drawn; ++i) {
    const RooflineDevice& d = r.devices[i];
    out.charts += fmt::format(
        "<div class=\"roofline-chart\" data-device=\"{}\"{}><p class=\"muted\">{}: {} of op time "
        "has FLOPs and bytes. Peaks: {}.</p>\n<div>{}</div></div>\n",
        xml_escape(d.device), i ? " hidden" : "", xml_escape(d.device),
        human_percent(d.coverage.share()),
        xml_escape(d.peaks.model.empty() ? std::string("device not identified") : d.peaks.model),
        roofline_svg(d));
  }
  const size_t listed = std::min(r.devices.size(), kRooflineTableDevices);
  if (r.devices.size() > kRooflineCharts)
    out.charts += fmt::format("<p class=\"muted\">{} more devices in the table only.</p>\n",
                              listed - kRooflineCharts);
  if (r.devices.size() > listed)
    out.charts += fmt::format(
        "<p class=\"muted\">{} more devices neither drawn nor listed (<code>jaxprof roofline "
        "--device NAME</code> gives any device).</p>\n",
        r.devices.size() - listed);
  HtmlTable& t = out.table;
  t.id = "roofline-table";
  t.filterable = r.devices.size() > 1;
  for (auto [h, numeric] : std::initializer_list<std::pair<const char*, bool>>{{"device", false},
                                                                               {"op", false},
                                                                               {"module", false},
                                                                               {"category", false},
                                                                               {"total", true},
                                                                               {"FLOPs", true},
                                                                               {"bytes", true},
                                                                               {"TFLOP/s", true},
                                                                               {"GB/s", true},
                                                                               {"FLOP/B", true},
                                                                               {"bound", false},
                                                                               {"efficiency", true},
                                                                               {"source", false}})
    t.add_column(h, numeric);
  for (size_t k = 0; k < listed; ++k) {
    const RooflineDevice& d = r.devices[k];
    const size_t n = top > 0 ? std::min(top, d.ops.size()) : d.ops.size();
    for (size_t i = 0; i < n; ++i) {
      const RooflineOp& o = d.ops[i];
      const RooflineFigures& f = o.figures;
      auto opt = [](const auto& v, double scale, const char* unit) {
        return v ? number_cell(static_cast<double>(*v) * scale, unit) : text_cell("—");
      };
      t.rows.push_back({text_cell(d.device), text_cell(o.name), text_cell(o.module),
                        text_cell(o.category), duration_cell(static_cast<double>(f.time_ps)),
                        opt(f.flops, 1, ""), opt(f.bytes_accessed, 1, ""),
                        opt(f.flop_rate, 1e-12, ""), opt(f.bandwidth, 1e-9, ""),
                        opt(f.intensity, 1, ""), text_cell(bound_name(f.bound)),
                        f.efficiency ? percent_cell(*f.efficiency) : text_cell("—"),
                        text_cell(cost_source_name(o.source))});
      t.row_data.push_back({{"device", d.device}});
    }
  }
  return out;
}

void keep_shown(RooflineDevice& d, size_t position, size_t top) {
  std::vector<RooflineProgram>().swap(d.programs);
  if (position >= kRooflineTableDevices)
    std::vector<RooflineOp>().swap(d.ops);
  else if (position >= kRooflineCharts && top > 0 && d.ops.size() > top)
    d.ops.erase(d.ops.begin() + static_cast<std::ptrdiff_t>(top), d.ops.end());
}

}  // namespace jaxprof
