#include "jaxprof/render/html_table.h"

#include <fmt/format.h>

#include "jaxprof/render/flame_svg.h"
#include "jaxprof/render/units.h"

namespace jaxprof {

std::string HtmlTable::render() const {
  std::string out =
      fmt::format("<table class=\"sortable\" id=\"{}\">\n<thead><tr>", xml_escape(id));
  for (size_t c = 0; c < headers.size(); ++c)
    out += fmt::format("<th data-type=\"{}\" tabindex=\"0\" title=\"Click to sort\">{}</th>",
                       numeric[c] ? "num" : "text", xml_escape(headers[c]));
  out += "</tr></thead>\n<tbody>\n";
  for (const auto& row : rows) {
    out += "<tr>";
    for (size_t c = 0; c < row.size(); ++c) {
      const HtmlCell& cell = row[c];
      if (cell.value)
        out += fmt::format("<td class=\"n\" data-v=\"{}\">{}</td>", number(*cell.value),
                           xml_escape(cell.text));
      else
        out += fmt::format("<td>{}</td>", xml_escape(cell.text));
    }
    out += "</tr>\n";
  }
  out += "</tbody></table>\n";
  return out;
}

HtmlCell text_cell(std::string text) { return {std::move(text), std::nullopt}; }
HtmlCell duration_cell(double ps) { return {human_duration(ps), ps}; }
HtmlCell count_cell(double n) { return {fmt::format("{:.0f}", n), n}; }
HtmlCell percent_cell(double fraction) { return {human_percent(fraction), fraction}; }
HtmlCell number_cell(double v, const char* unit) {
  return {format_value(Measure::kNumber, v) + unit, v};
}
HtmlCell bytes_cell(std::optional<double> bytes) {
  return {format_value(Measure::kBytes, bytes), bytes};
}
HtmlCell bandwidth_cell(std::optional<double> gbps) {
  return {format_value(Measure::kBandwidth, gbps), gbps};
}

}  // namespace jaxprof
