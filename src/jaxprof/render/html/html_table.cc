#include "jaxprof/render/html/html_table.h"

#include <fmt/format.h>

#include "jaxprof/render/flame/flame_svg.h"
#include "jaxprof/render/text/text.h"
#include "jaxprof/common/units.h"

namespace jaxprof {

namespace {

std::string drill_button(const HtmlCell& cell) {
  if (cell.drill.detail)
    return fmt::format("<button type=\"button\" class=\"drill\" data-detail=\"1\">{}</button>",
                       xml_escape(cell.text));
  std::string scope = "{";
  for (const auto& [key, value] : cell.drill.scope) {
    if (scope.size() > 1) scope += ',';
    scope += json_string(key);
    scope += ':';
    scope += json_string(value);
  }
  scope += '}';
  return fmt::format(
      "<button type=\"button\" class=\"drill\" data-targets=\"{}\" data-scope=\"{}\">{}</button>",
      xml_escape(cell.drill.targets), xml_escape(scope), xml_escape(cell.text));
}

}  // namespace

std::string HtmlTable::render() const {
  std::string out =
      fmt::format("<div class=\"tablewrap\"><table class=\"sortable\" id=\"{}\"{}>\n<thead><tr>",
                  xml_escape(id), filterable ? " data-filter=\"1\"" : "");
  for (size_t c = 0; c < headers.size(); ++c)
    out += fmt::format("<th data-type=\"{}\" tabindex=\"0\" title=\"Click to sort\">{}</th>",
                       numeric[c] ? "num" : "text", xml_escape(headers[c]));
  out += "</tr></thead>\n<tbody>\n";
  for (size_t r = 0; r < rows.size(); ++r) {
    out += "<tr";
    if (r < row_data.size())
      for (const auto& [key, value] : row_data[r])
        out += fmt::format(" data-{}=\"{}\"", key, xml_escape(value));
    out += ">";
    for (const HtmlCell& cell : rows[r]) {
      std::string content = cell.drill.empty() ? xml_escape(cell.text) : drill_button(cell);
      std::string title = cell.title.empty() ? "" : " title=\"" + xml_escape(cell.title) + "\"";
      if (cell.value)
        out += fmt::format("<td class=\"n\" data-v=\"{}\"{}>{}</td>", number(*cell.value), title,
                           content);
      else if (cell.layout == "long" || cell.layout == "name")  // CSS cuts the inner block
        out += fmt::format("<td class=\"{}\"{}><div>{}</div></td>", cell.layout, title, content);
      else if (!cell.layout.empty())
        out += fmt::format("<td class=\"{}\"{}>{}</td>", cell.layout, title, content);
      else
        out += fmt::format("<td{}>{}</td>", title, content);
    }
    out += "</tr>\n";
  }
  out += "</tbody></table></div>\n";
  return out;
}

HtmlCell text_cell(std::string text) { return {std::move(text), std::nullopt}; }
HtmlCell name_cell(std::string text, HtmlDrill drill) {
  // Names longer than the column (36em, about 50 characters) are cut: the whole on hover.
  std::string title = text.size() > 48 ? text : "";
  return {std::move(text), std::nullopt, "name", std::move(title), std::move(drill)};
}
HtmlCell long_cell(std::string shown, std::string whole, HtmlDrill drill) {
  // The whole text on hover even when `shown` is it: the cell may still be cut by its width.
  return {std::move(shown), std::nullopt, "long", std::move(whole), std::move(drill)};
}
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
