#include "jaxprof/render/html/html_scatter.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "jaxprof/render/flame/flame_svg.h"

namespace jaxprof {
namespace {

constexpr const char* kPalette[] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759",
                                    "#76b7b2", "#edc948", "#b07aa1", "#9c755f"};
constexpr double kWidth = 900, kHeight = 380;
constexpr double kLeft = 78, kRight = 20, kTop = 36, kBottom = 50;
constexpr double kLogAbove = 30;  // a larger max / min ratio gets a log axis

Axis axis_for(const std::vector<double>& values, const ScatterAxisSpec& spec) {
  auto [lo, hi] = std::minmax_element(values.begin(), values.end());
  if (spec.quantity == AxisQuantity::kBytes || *hi / *lo > kLogAbove)
    return log_axis(*lo, *hi, spec.quantity);
  // Linear from zero, with room above the highest point.
  return linear_axis(0, *hi * 1.05, spec.quantity);
}

std::string axis_title(const ScatterAxisSpec& spec, const Axis& a) {
  std::string t = spec.title;
  if (!a.log && !a.unit.empty()) t += " (" + a.unit + ")";
  if (a.log) t += " (log scale)";
  return xml_escape(t);
}

}  // namespace

std::string svg_scatter(const std::vector<ScatterPoint>& points, const ScatterAxisSpec& xs,
                        const ScatterAxisSpec& ys) {
  std::vector<const ScatterPoint*> shown;
  std::vector<double> xv, yv;
  std::vector<std::string> groups;
  for (const ScatterPoint& p : points) {
    if (!(p.x > 0) || !(p.y > 0) || !std::isfinite(p.x) || !std::isfinite(p.y)) continue;
    shown.push_back(&p);
    xv.push_back(p.x);
    yv.push_back(p.y);
    if (std::find(groups.begin(), groups.end(), p.group) == groups.end()) groups.push_back(p.group);
  }
  if (shown.empty()) return {};
  const Axis xa = axis_for(xv, xs), ya = axis_for(yv, ys);
  const double x0 = kLeft, x1 = kWidth - kRight, y0 = kTop, y1 = kHeight - kBottom;
  auto px = [&](double v) { return x0 + xa.fraction(v) * (x1 - x0); };
  auto py = [&](double v) { return y1 - ya.fraction(v) * (y1 - y0); };

  std::string out = fmt::format(
      "<svg class=\"chart scatter\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {} {}\" "
      "role=\"img\" data-x-scale=\"{}\" data-y-scale=\"{}\">\n",
      kWidth, kHeight, xa.log ? "log" : "linear", ya.log ? "log" : "linear");
  for (const AxisTick& t : xa.ticks)
    out += fmt::format(
        "<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#e6e6e6\"/>"
        "<text class=\"xt\" x=\"{0:.1f}\" y=\"{3}\" text-anchor=\"middle\">{4}</text>\n",
        px(t.value), y0, y1 + 4, y1 + 17, xml_escape(t.label));
  for (const AxisTick& t : ya.ticks)
    out += fmt::format(
        "<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\" stroke=\"#e6e6e6\"/>"
        "<text class=\"yt\" x=\"{3}\" y=\"{4:.1f}\" text-anchor=\"end\">{5}</text>\n",
        x0 - 4, py(t.value), x1, x0 - 7, py(t.value) + 4, xml_escape(t.label));
  out += fmt::format(
      "<line x1=\"{0}\" y1=\"{2}\" x2=\"{1}\" y2=\"{2}\" stroke=\"#444\"/>"
      "<line x1=\"{0}\" y1=\"{3}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#444\"/>\n"
      "<text x=\"{4}\" y=\"{5}\" text-anchor=\"middle\">{6}</text>"
      "<text x=\"16\" y=\"{7}\" text-anchor=\"middle\" transform=\"rotate(-90 16 {7})\">{8}"
      "</text>\n",
      x0, x1, y1, y0, (x0 + x1) / 2, kHeight - 10, axis_title(xs, xa), (y0 + y1) / 2,
      axis_title(ys, ya));
  double lx = x0;
  for (size_t g = 0; g < groups.size(); ++g) {
    out += fmt::format(
        "<circle cx=\"{0:.0f}\" cy=\"14\" r=\"5\" fill=\"{1}\"/>"
        "<text x=\"{2:.0f}\" y=\"18\">{3}</text>\n",
        lx + 5, kPalette[g % 8], lx + 14, xml_escape(groups[g]));
    lx += 34 + 7.0 * static_cast<double>(groups[g].size());
  }
  for (const ScatterPoint* p : shown) {
    size_t g =
        static_cast<size_t>(std::find(groups.begin(), groups.end(), p->group) - groups.begin());
    out += fmt::format(
        "<circle class=\"pt\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"5\" fill=\"{}\" "
        "fill-opacity=\"0.8\"><title>{}</title></circle>\n",
        px(p->x), py(p->y), kPalette[g % 8], xml_escape(p->label));
  }
  out += "</svg>\n";
  return out;
}

}  // namespace jaxprof
