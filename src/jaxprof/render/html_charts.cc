#include "jaxprof/render/html_charts.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "jaxprof/render/flame_svg.h"
#include "jaxprof/render/units.h"

namespace jaxprof {
namespace {

constexpr const char* kPalette[] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759",
                                    "#76b7b2", "#edc948", "#b07aa1", "#9c755f"};

std::string byte_label(double bytes) { return human_bytes(bytes); }

}  // namespace

std::string svg_stacked_bars(const std::vector<StackedBar>& bars,
                             const std::vector<ChartLegend>& legend) {
  constexpr int kLabel = 190, kBar = 560, kRow = 22, kNote = 160;
  const int width = kLabel + kBar + kNote;
  const int height = static_cast<int>(bars.size()) * kRow + 34;
  std::string out = fmt::format(
      "<svg class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" "
      "viewBox=\"0 0 {0} {1}\" role=\"img\">\n",
      width, height);
  for (size_t i = 0; i < bars.size(); ++i) {
    const StackedBar& b = bars[i];
    double sum = 0;
    for (double v : b.values) sum += std::max(0.0, v);
    const int y = static_cast<int>(i) * kRow + 4;
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n", kLabel - 6,
                       y + 14, xml_escape(b.label));
    double x = kLabel;
    for (size_t k = 0; k < b.values.size() && k < legend.size(); ++k) {
      double v = std::max(0.0, b.values[k]);
      double w = sum > 0 ? kBar * v / sum : 0;
      if (w <= 0) continue;
      out += fmt::format(
          "<rect x=\"{:.2f}\" y=\"{}\" width=\"{:.2f}\" height=\"{}\" fill=\"{}\"><title>{}: {} "
          "({})</title></rect>\n",
          x, y, w, kRow - 6, legend[k].color, xml_escape(legend[k].name), human_duration(v),
          human_percent(v / sum));
      x += w;
    }
    out += fmt::format("<text x=\"{}\" y=\"{}\">{}</text>\n", kLabel + kBar + 6, y + 14,
                       xml_escape(b.note));
  }
  double lx = kLabel;
  const int ly = static_cast<int>(bars.size()) * kRow + 14;
  for (const ChartLegend& l : legend) {
    out += fmt::format(
        "<rect x=\"{:.0f}\" y=\"{}\" width=\"12\" height=\"12\" fill=\"{}\"/>"
        "<text x=\"{:.0f}\" y=\"{}\">{}</text>\n",
        lx, ly, l.color, lx + 16, ly + 11, xml_escape(l.name));
    lx += 30 + 7.0 * static_cast<double>(l.name.size());
  }
  out += "</svg>\n";
  return out;
}

std::string svg_scatter(const std::vector<ScatterPoint>& points, const std::string& x_label,
                        const std::string& y_label) {
  constexpr int kW = 640, kH = 320, kL = 70, kR = 20, kT = 16, kB = 44;
  double xmin = 1, xmax = 2, ymax = 1;
  bool first = true;
  for (const ScatterPoint& p : points) {
    if (p.x <= 0) continue;
    double lx = std::log2(p.x);
    if (first) xmin = xmax = lx;
    xmin = std::min(xmin, lx);
    xmax = std::max(xmax, lx);
    ymax = std::max(ymax, p.y);
    first = false;
  }
  xmin = std::floor(xmin) - 1;
  xmax = std::ceil(xmax) + 1;
  ymax *= 1.1;
  auto px = [&](double x) { return kL + (std::log2(x) - xmin) / (xmax - xmin) * (kW - kL - kR); };
  auto py = [&](double y) { return kH - kB - y / ymax * (kH - kT - kB); };
  std::string out = fmt::format(
      "<svg class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" "
      "viewBox=\"0 0 {0} {1}\" role=\"img\">\n"
      "<line x1=\"{2}\" y1=\"{3}\" x2=\"{4}\" y2=\"{3}\" stroke=\"#444\"/>"
      "<line x1=\"{2}\" y1=\"{5}\" x2=\"{2}\" y2=\"{3}\" stroke=\"#444\"/>\n",
      kW, kH, kL, kH - kB, kW - kR, kT);
  // Ticks at every other power of two keep the labels apart.
  int step = std::max(1, static_cast<int>((xmax - xmin) / 8));
  for (int e = static_cast<int>(xmin); e <= static_cast<int>(xmax); e += step) {
    double x = px(std::exp2(e));
    out += fmt::format(
        "<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#ccc\"/>"
        "<text x=\"{0:.1f}\" y=\"{3}\" text-anchor=\"middle\">{4}</text>\n",
        x, kT, kH - kB, kH - kB + 14, byte_label(std::exp2(e)));
  }
  for (int i = 0; i <= 4; ++i) {
    double v = ymax * i / 4;
    out += fmt::format(
        "<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\" stroke=\"#eee\"/>"
        "<text x=\"{3}\" y=\"{4:.1f}\" text-anchor=\"end\">{5:.3g}</text>\n",
        kL, py(v), kW - kR, kL - 4, py(v) + 4, v);
  }
  out += fmt::format(
      "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>"
      "<text x=\"14\" y=\"{}\" text-anchor=\"middle\" transform=\"rotate(-90 14 {})\">{}</text>\n",
      (kL + kW - kR) / 2, kH - 6, xml_escape(x_label), (kT + kH - kB) / 2, (kT + kH - kB) / 2,
      xml_escape(y_label));
  size_t i = 0;
  for (const ScatterPoint& p : points) {
    if (p.x <= 0) continue;
    out += fmt::format(
        "<circle class=\"pt\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"4\" fill=\"{}\" "
        "fill-opacity=\"0.75\"><title>{}</title></circle>\n",
        px(p.x), py(p.y), kPalette[i++ % 8], xml_escape(p.label));
  }
  out += "</svg>\n";
  return out;
}

std::string svg_duration_lines(const std::vector<LineSeries>& series, const std::string& x_label,
                               const std::vector<std::string>& x_ticks) {
  constexpr int kW = 720, kH = 300, kL = 80, kR = 150, kT = 16, kB = 40;
  size_t n = 1;
  double ymax = 1;
  for (const LineSeries& s : series) {
    n = std::max(n, s.ys.size());
    for (double y : s.ys) ymax = std::max(ymax, y);
  }
  ymax *= 1.1;
  auto px = [&](size_t i) {
    return kL +
           (n > 1 ? static_cast<double>(i) / static_cast<double>(n - 1) : 0.5) * (kW - kL - kR);
  };
  auto py = [&](double y) { return kH - kB - y / ymax * (kH - kT - kB); };
  std::string out = fmt::format(
      "<svg class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" "
      "viewBox=\"0 0 {0} {1}\" role=\"img\">\n"
      "<line x1=\"{2}\" y1=\"{3}\" x2=\"{4}\" y2=\"{3}\" stroke=\"#444\"/>"
      "<line x1=\"{2}\" y1=\"{5}\" x2=\"{2}\" y2=\"{3}\" stroke=\"#444\"/>\n",
      kW, kH, kL, kH - kB, kW - kR, kT);
  for (int i = 0; i <= 4; ++i) {
    double v = ymax * i / 4;
    out += fmt::format(
        "<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\" stroke=\"#eee\"/>"
        "<text x=\"{3}\" y=\"{4:.1f}\" text-anchor=\"end\">{5}</text>\n",
        kL, py(v), kW - kR, kL - 4, py(v) + 4, human_duration(v));
  }
  out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n",
                     (kL + kW - kR) / 2, kH - 8, xml_escape(x_label));
  const size_t stride = std::max<size_t>(1, (x_ticks.size() + 19) / 20);
  for (size_t i = 0; i < x_ticks.size(); ++i) {
    out +=
        fmt::format("<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#ddd\"/>\n",
                    px(i), kT, kH - kB);
    if (i % stride == 0)
      out += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", px(i),
                         kH - kB + 14, xml_escape(x_ticks[i]));
  }
  for (size_t k = 0; k < series.size(); ++k) {
    const LineSeries& s = series[k];
    const char* color = kPalette[k % 8];
    std::string pts;
    for (size_t i = 0; i < s.ys.size(); ++i)
      pts += fmt::format("{:.1f},{:.1f} ", px(i), py(s.ys[i]));
    out += fmt::format(
        "<polyline class=\"series\" points=\"{}\" fill=\"none\" stroke=\"{}\" "
        "stroke-width=\"1.5\"/>\n",
        pts, color);
    for (size_t i = 0; i < s.ys.size(); ++i)
      out += fmt::format(
          "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"2.5\" fill=\"{}\"><title>{}</title>"
          "</circle>\n",
          px(i), py(s.ys[i]), color,
          xml_escape(i < s.tips.size()
                         ? s.tips[i]
                         : fmt::format("{} #{}: {}", s.name, i, human_duration(s.ys[i]))));
    out += fmt::format(
        "<rect x=\"{}\" y=\"{}\" width=\"10\" height=\"10\" fill=\"{}\"/>"
        "<text x=\"{}\" y=\"{}\">{}</text>\n",
        kW - kR + 10, kT + 16 * static_cast<int>(k), color, kW - kR + 24,
        kT + 9 + 16 * static_cast<int>(k), xml_escape(s.name));
  }
  out += "</svg>\n";
  return out;
}

namespace {

// At most `n` bytes of `s`, cut before a whole UTF-8 character, with "..." when cut.
std::string shortened(const std::string& s, size_t n) {
  if (s.size() <= n) return s;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  return s.substr(0, n) + "...";
}

}  // namespace

std::string svg_signed_duration_bars(const std::vector<SignedBar>& bars) {
  constexpr int kLabel = 260, kHalf = 240, kRow = 20, kValue = 90;
  const int width = kLabel + 2 * kHalf + kValue;
  const int height = static_cast<int>(bars.size()) * kRow + 8;
  double most = 0;
  for (const SignedBar& b : bars) most = std::max(most, std::fabs(b.value));
  const int zero = kLabel + kHalf;
  std::string out = fmt::format(
      "<svg class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" "
      "viewBox=\"0 0 {0} {1}\" role=\"img\">\n",
      width, height);
  for (size_t i = 0; i < bars.size(); ++i) {
    const SignedBar& b = bars[i];
    const int y = static_cast<int>(i) * kRow + 4;
    double w = most > 0 ? kHalf * std::fabs(b.value) / most : 0;
    double x = b.value < 0 ? zero - w : zero;
    std::string value = fmt::format("{}{}", b.value > 0 ? "+" : "", human_duration(b.value));
    // Labels longer than the margin are cut; the bar's tooltip has them whole.
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n", kLabel - 6,
                       y + 12, xml_escape(shortened(b.label, 40)));
    out += fmt::format(
        "<rect x=\"{:.2f}\" y=\"{}\" width=\"{:.2f}\" height=\"{}\" fill=\"{}\"><title>{}: {}{}"
        "</title></rect>\n",
        x, y, std::max(w, 0.5), kRow - 5, b.value > 0 ? "#e15759" : "#59a14f", xml_escape(b.label),
        value, b.note.empty() ? "" : " (" + xml_escape(b.note) + ")");
    out += fmt::format("<text x=\"{}\" y=\"{}\">{}</text>\n", kLabel + 2 * kHalf + 6, y + 12,
                       xml_escape(value));
  }
  out += fmt::format("<line x1=\"{0}\" x2=\"{0}\" y1=\"0\" y2=\"{1}\" stroke=\"#888\"/>\n", zero,
                     height);
  out += "</svg>\n";
  return out;
}

}  // namespace jaxprof
