#include "jaxprof/render/flame/flame_svg.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>

#include "jaxprof/common/units.h"

namespace jaxprof {

namespace {

// Length of the UTF-8 sequence at s[i] when it encodes a character XML 1.0 allows, else 0.
size_t xml_char_length(std::string_view s, size_t i) {
  unsigned char c = static_cast<unsigned char>(s[i]);
  if (c < 0x80) return (c >= 0x20 && c != 0x7f) ? 1 : 0;
  size_t n = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 ? 2 : 0;
  if (n == 0 || c > 0xf4 || i + n > s.size()) return 0;
  uint32_t cp = c & (0x7f >> n);
  for (size_t k = 1; k < n; ++k) {
    unsigned char d = static_cast<unsigned char>(s[i + k]);
    if ((d & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (d & 0x3f);
  }
  bool overlong = (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000);
  bool forbidden = (cp >= 0xd800 && cp <= 0xdfff) || cp == 0xfffe || cp == 0xffff ||
                   cp > 0x10ffff || (cp >= 0x80 && cp <= 0x9f);
  return overlong || forbidden ? 0 : n;
}

// The name as it fits in `width_px` of 12px monospace, cut with ".." when it does not.
std::string label(std::string_view name, double width_px) {
  constexpr double kCharPx = 7.0;
  long fits = static_cast<long>((width_px - 6) / kCharPx);
  if (fits < 3) return {};
  auto bytes_of = [&](long chars) {  // bytes of the first `chars` characters
    size_t i = 0;
    for (long k = 0; k < chars && i < name.size(); ++k)
      i += std::max<size_t>(1, xml_char_length(name, i));
    return i;
  };
  size_t all = bytes_of(fits);
  if (all >= name.size()) return std::string(name);
  return std::string(name.substr(0, bytes_of(fits - 2))) + "..";
}

uint32_t fnv1a(std::string_view s) {
  uint32_t h = 2166136261u;
  for (char c : s) h = (h ^ static_cast<unsigned char>(c)) * 16777619u;
  return h;
}

std::string color(const FlameNode& n) {
  uint32_t h = fnv1a(n.name);
  int a = static_cast<int>(h & 0xff), b = static_cast<int>((h >> 8) & 0xff),
      c = static_cast<int>((h >> 16) & 0xff);
  switch (n.kind) {
    case FrameKind::kRoot:
      return "rgb(200,200,200)";
    case FrameKind::kDevice:
      return "rgb(176,180,210)";
    case FrameKind::kIdle:
      return "rgb(232,232,232)";
    case FrameKind::kModule:
      return fmt::format("rgb({},{},{})", 80 + a % 50, 140 + b % 50, 210 + c % 40);
    case FrameKind::kOp:
      return fmt::format("rgb({},{},{})", 120 + a % 70, 190 + b % 40, 60 + c % 50);
    case FrameKind::kSource:
    case FrameKind::kOpPath:
      return fmt::format("rgb({},{},{})", 205 + a % 50, 80 + b % 130, 30 + c % 40);
  }
  return "rgb(200,200,200)";
}

// The script is written here, not taken from elsewhere: it moves and relabels the frames that a
// click zooms into, and shows a frame's title in the details line while hovered.
constexpr const char* kScript = R"JS(
(function () {
  // Its own <svg>, not the document's root: the report embeds several of these in one HTML page.
  var me = document.currentScript;
  var svg = me && me.closest ? me.closest('svg') : document.documentElement;
  var width = Number(svg.getAttribute('data-width'));
  var pad = Number(svg.getAttribute('data-pad'));
  var charPx = 7;
  var details = svg.getElementsByClassName('details')[0];
  var frames = Array.prototype.slice.call(svg.getElementsByClassName('f'));
  var bg = svg.getElementsByClassName('bg')[0], heading = svg.getElementsByClassName('title')[0];
  var root = null, current = null;
  frames.forEach(function (g) {
    var title = g.getElementsByTagName('title')[0].textContent;
    g.jpName = title.split('\n')[0];
    g.jpInfo = title.replace('\n', ' \u2014 ');
    g.jpX = Number(g.getAttribute('data-x'));
    g.jpW = Number(g.getAttribute('data-w'));
    g.jpD = Number(g.getAttribute('data-d'));
    if (g.jpD === 0) root = g;
  });
  function fit(g, px) {
    var n = Math.floor((px - 6) / charPx);
    var s = g.jpName;
    if (n < 3) s = '';
    else if (s.length > n) s = s.slice(0, n - 2) + '..';
    g.getElementsByTagName('text')[0].textContent = s;
  }
  // Inside a page: as wide as the element that holds it, one drawing unit per pixel.
  function relayout() {
    if (!svg.hasAttribute('data-fluid') || !svg.parentNode) return false;
    var w = Math.floor(svg.parentNode.clientWidth);
    if (!(w >= 200) || w === width) return false;
    width = w;
    svg.setAttribute('width', w);
    svg.setAttribute('data-width', w);
    svg.setAttribute('viewBox', '0 0 ' + w + ' ' + svg.getAttribute('height'));
    if (bg) bg.setAttribute('width', w);
    if (heading) heading.setAttribute('x', w / 2);
    return true;
  }
  function zoom(target) {
    if (!target || target.jpW <= 0) return;
    current = target;
    var from = target.jpX, to = target.jpX + target.jpW;
    var scale = (width - 2 * pad) / target.jpW;
    frames.forEach(function (g) {
      var s = Math.max(g.jpX, from), e = Math.min(g.jpX + g.jpW, to);
      if (e <= s) { g.setAttribute('display', 'none'); return; }
      g.removeAttribute('display');
      var x = pad + (s - from) * scale, w = (e - s) * scale;
      var rect = g.getElementsByTagName('rect')[0];
      rect.setAttribute('x', x.toFixed(2));
      rect.setAttribute('width', Math.max(0, w - 0.5).toFixed(2));
      g.getElementsByTagName('text')[0].setAttribute('x', (x + 3).toFixed(2));
      g.classList.toggle('ctx', g.jpD < target.jpD);
      fit(g, w);
    });
  }
  frames.forEach(function (g) {
    g.addEventListener('click', function () { zoom(g === root ? root : g); });
    g.addEventListener('mouseover', function () { details.textContent = g.jpInfo; });
    g.addEventListener('mouseout', function () { details.textContent = ' '; });
  });
  // Frames whose name matches `re` are highlighted; returns their share of the whole (a frame
  // inside another match counts once).
  function search(re) {
    var matched = 0, total = root ? root.jpW : 0, ends = [];
    frames.forEach(function (g) {
      var hit = !!re && re.test(g.jpName);
      g.classList.toggle('hl', hit);
      if (!hit) return;
      var inside = ends.some(function (e) { return g.jpX >= e[0] && g.jpX + g.jpW <= e[1]; });
      if (!inside) { matched += g.jpW; ends.push([g.jpX, g.jpX + g.jpW]); }
    });
    return total > 0 ? matched / total : 0;
  }
  svg.jpReset = function () { zoom(root); };
  svg.jpSearch = search;
  relayout();
  zoom(root);
  if (svg.hasAttribute('data-fluid'))
    window.addEventListener('resize', function () { if (relayout()) zoom(current); });
  svg.setAttribute('data-ready', '1');  // lets a headless check see that the script ran through
})();
)JS";

}  // namespace

std::string xml_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    size_t n = xml_char_length(text, i);
    if (n == 0) {
      // Tabs and newlines would still be legal XML, but a name is one line.
      unsigned char c = static_cast<unsigned char>(text[i]);
      out += (c < 0x20 || c == 0x7f) ? " " : "\xef\xbf\xbd";  // U+FFFD for broken UTF-8
      ++i;
      continue;
    }
    if (n == 1) {
      switch (text[i]) {
        case '&':
          out += "&amp;";
          break;
        case '<':
          out += "&lt;";
          break;
        case '>':
          out += "&gt;";
          break;
        case '"':
          out += "&quot;";
          break;
        case '\'':
          out += "&apos;";
          break;
        default:
          out += text[i];
      }
    } else {
      out.append(text.substr(i, n));
    }
    i += n;
  }
  return out;
}

std::string render_flame_svg(const FlameTree& t, const FlameSvgOptions& o) {
  constexpr int kRow = 17, kPad = 10, kTop = 46, kBottom = 30;
  const double width = std::max(200, o.width);
  const double inner = width - 2 * kPad;
  const int64_t total = t.nodes[0].total_ps;

  // Which nodes are drawn, and where: x offset (ps from the left) by a depth-first walk.
  std::vector<int64_t> start(t.nodes.size(), 0);
  std::vector<uint32_t> order;
  size_t omitted = 0;
  uint32_t max_depth = 0;
  std::vector<uint32_t> todo = {0};
  while (!todo.empty()) {
    uint32_t id = todo.back();
    todo.pop_back();
    const FlameNode& n = t.nodes[id];
    order.push_back(id);
    max_depth = std::max(max_depth, n.depth);
    int64_t x = start[id];
    for (uint32_t c : n.children) {
      start[c] = x;
      x += t.nodes[c].total_ps;
      if (static_cast<double>(t.nodes[c].total_ps) < o.min_fraction * static_cast<double>(total))
        ++omitted;
      else
        todo.push_back(c);
    }
  }
  const int height = kTop + static_cast<int>(max_depth + 1) * kRow + kBottom;

  std::string out;
  out.reserve(order.size() * 256 + 8192);
  out += fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
      "<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" "
      "viewBox=\"0 0 {0} {1}\" data-width=\"{0}\" data-pad=\"{2}\"{3}>\n",
      width, height, kPad, o.fluid ? " data-fluid=\"1\"" : "");
  out +=
      "<style>\n"
      "text { font-family: monospace; font-size: 12px; fill: #000; }\n"
      ".f { cursor: pointer; }\n"
      ".f text { pointer-events: none; }\n"
      ".f:hover rect { stroke: #000; stroke-width: 0.5; }\n"
      ".ctx rect { opacity: 0.5; }\n"
      ".f.hl rect { fill: rgb(224,80,224); }\n"
      ".hint { fill: #555; }\n"
      "</style>\n";
  out += fmt::format(
      "<rect class=\"bg\" x=\"0\" y=\"0\" width=\"{}\" height=\"{}\" fill=\"#f8f8f4\"/>\n", width,
      height);
  out += fmt::format(
      "<text class=\"title\" x=\"{}\" y=\"20\" text-anchor=\"middle\" "
      "style=\"font-size:16px\">{}</text>\n",
      width / 2, xml_escape(o.title));
  std::string hint =
      fmt::format("by {}, {} in all. Hover: time and share; click: zoom; click the root: reset.",
                  flame_by_name(t.by), human_duration(static_cast<double>(total)));
  if (omitted > 0)
    hint += fmt::format(" Frames under {:g}% of the whole left out: {}.", o.min_fraction * 100,
                        omitted);
  out += fmt::format("<text class=\"hint\" x=\"{}\" y=\"38\">{}</text>\n", kPad, xml_escape(hint));

  for (uint32_t id : order) {
    const FlameNode& n = t.nodes[id];
    double scale = total > 0 ? inner / static_cast<double>(total) : 0;
    double x = kPad + static_cast<double>(start[id]) * scale;
    double w = static_cast<double>(n.total_ps) * scale;
    int y = kTop + static_cast<int>(max_depth - n.depth) * kRow;
    double pct =
        total > 0 ? 100.0 * static_cast<double>(n.total_ps) / static_cast<double>(total) : 0.0;
    out += fmt::format(
        "<g class=\"f\" data-x=\"{}\" data-w=\"{}\" data-d=\"{}\"><title>{}\n{} ({:.2f}%)</title>"
        "<rect x=\"{:.2f}\" y=\"{}\" width=\"{:.2f}\" height=\"{}\" rx=\"2\" fill=\"{}\"/>"
        "<text x=\"{:.2f}\" y=\"{}\">{}</text></g>\n",
        start[id], n.total_ps, n.depth, xml_escape(n.name),
        human_duration(static_cast<double>(n.total_ps)), pct, x, y, std::max(0.0, w - 0.5),
        kRow - 1, color(n), x + 3, y + kRow - 5, xml_escape(label(n.name, w)));
  }
  out += fmt::format("<text class=\"details\" x=\"{}\" y=\"{}\"> </text>\n", kPad, height - 10);
  out += "<script type=\"text/ecmascript\"><![CDATA[";
  out += kScript;
  out += "]]></script>\n</svg>\n";
  return out;
}

}  // namespace jaxprof
