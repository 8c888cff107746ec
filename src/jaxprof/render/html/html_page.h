// The frame every jaxprof HTML page shares: doctype, a Content-Security-Policy that lets nothing
// load from anywhere, the report's stylesheet, a header with the section links, the page data for
// the script (<script type="application/json" id="report-data">, which must hold "rows": {table id:
// row count}) and the script that sorts tables and runs the #selftest hook.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "jaxprof/render/html/html_table.h"

namespace jaxprof {

// What the frame and the script need to know of a page's body, collected while it is written.
struct HtmlPageParts {
  std::vector<std::string> sections;                 // ids, in order
  std::vector<std::pair<std::string, size_t>> rows;  // table id -> rows

  // <section id=...><h2>title</h2>body</section>; `id` is a constant of the page, not escaped.
  std::string section(std::string_view id, std::string_view title, const std::string& body);
  std::string table(const HtmlTable& t);  // rendered, its rows counted
  std::string sections_json() const;      // ["id", ...]
  std::string rows_json() const;          // {"id": rows, ...}
};

struct HtmlPage {
  std::string title;
  std::string subtitle;               // under the title, e.g. the profile path
  std::vector<std::string> sections;  // ids of the body's <section>s, linked from the header
  std::string body;                   // HTML
  std::string data_json;              // JSON for the script; made safe by json_for_script here
};

std::string render_html_page(const HtmlPage& page);

// JSON text made safe inside <script type="application/json">: '<', '>', '&', U+2028 and U+2029
// become \uXXXX escapes, so no "</script>" or "<!--" can end or bend the block.
std::string json_for_script(std::string_view json);

}  // namespace jaxprof
