#include "jaxprof/render/html/html_page.h"

#include <fmt/format.h>

#include "jaxprof/render/flame/flame_svg.h"
#include "jaxprof/render/html/html_report_assets.h"
#include "jaxprof/render/text/text.h"

namespace jaxprof {

std::string HtmlPageParts::section(std::string_view id, std::string_view title,
                                   const std::string& body) {
  sections.emplace_back(id);
  return fmt::format("<section id=\"{}\">\n<h2>{}</h2>\n{}</section>\n", id, xml_escape(title),
                     body);
}

std::string HtmlPageParts::table(const HtmlTable& t) {
  rows.emplace_back(t.id, t.rows.size());
  return t.render();
}

std::string HtmlPageParts::sections_json() const {
  std::string j = "[";
  for (size_t i = 0; i < sections.size(); ++i) {
    if (i > 0) j += ',';
    j += json_string(sections[i]);
  }
  return j + "]";
}

std::string HtmlPageParts::rows_json() const {
  std::string j = "{";
  for (size_t i = 0; i < rows.size(); ++i)
    j += fmt::format("{}{}:{}", i ? "," : "", json_string(rows[i].first), rows[i].second);
  return j + "}";
}

std::string json_for_script(std::string_view json) {
  std::string out;
  out.reserve(json.size());
  for (size_t i = 0; i < json.size(); ++i) {
    char c = json[i];
    if (c == '<') {
      out += "\\u003c";
    } else if (c == '>') {
      out += "\\u003e";
    } else if (c == '&') {
      out += "\\u0026";
    } else if (c == '\xe2' && i + 2 < json.size() && json[i + 1] == '\x80' &&
               (json[i + 2] == '\xa8' || json[i + 2] == '\xa9')) {
      out += json[i + 2] == '\xa8' ? "\\u2028" : "\\u2029";
      i += 2;
    } else {
      out += c;
    }
  }
  return out;
}

std::string render_html_page(const HtmlPage& p) {
  std::string nav;
  for (const std::string& id : p.sections)
    nav += fmt::format("<a href=\"#{0}\">{0}</a>", xml_escape(id));
  std::string out;
  out.reserve(p.body.size() + p.data_json.size() + 16384);
  out +=
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      // Nothing may load from anywhere: the page is one file.
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
      "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  out += fmt::format("<title>{}</title>\n<style>{}</style>\n</head>\n<body>\n", xml_escape(p.title),
                     report_assets::kCss);
  out += fmt::format("<header><h1>{}</h1><div class=\"muted\">{}</div>\n<nav>{}</nav></header>\n",
                     xml_escape(p.title), xml_escape(p.subtitle), nav);
  out += p.body;
  out += "<script type=\"application/json\" id=\"report-data\">" + json_for_script(p.data_json) +
         "</script>\n";
  out += fmt::format("<script>{}</script>\n</body>\n</html>\n", report_assets::kScript);
  return out;
}

}  // namespace jaxprof
