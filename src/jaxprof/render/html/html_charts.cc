#include "jaxprof/render/html/html_charts.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "jaxprof/render/flame/flame_svg.h"
#include "jaxprof/common/units.h"

namespace jaxprof {
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
