#include "jaxprof/render/html/html_step_chart.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "jaxprof/render/flame/flame_svg.h"
#include "jaxprof/render/html/chart_axis.h"

namespace jaxprof {
namespace {

constexpr const char* kPalette[] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759",
                                    "#76b7b2", "#edc948", "#b07aa1", "#9c755f"};
// The drawing's own units; CSS scales it to the page's width.
constexpr double kWidth = 1100, kHeight = 320;
constexpr double kTop = 40, kBottom = 46, kLeft = 64, kRight = 16;
constexpr double kWarmPanel = 130, kGap = 64;  // the warm-up panel and the space after it
constexpr size_t kMostCircles = 1500;          // beyond: lines only (the file stays small)

bool is_warmup(const StepSeries& s, size_t i) { return i < s.warmup.size() && s.warmup[i]; }

double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  double pos = q * static_cast<double>(v.size() - 1);
  size_t i = static_cast<size_t>(pos);
  double f = pos - static_cast<double>(i);
  return i + 1 < v.size() ? v[i] * (1 - f) + v[i + 1] * f : v[i];
}

std::string tip(const StepChart& c, const StepSeries& s, size_t i) {
  if (i < s.tips.size()) return s.tips[i];
  std::string x = i < c.x_names.size() ? c.x_names[i] : fmt::format("{}", i);
  return fmt::format("{} {} {}: {}", s.name, c.x_label, x,
                     axis_value_text(s.ys[i], AxisQuantity::kDuration));
}

// Labels at every k-th x (k round) so that at most about 16 are drawn.
size_t label_stride(size_t n) {
  for (size_t k : {1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000, 2000, 5000})
    if ((n + k - 1) / k <= 16) return k;
  return (n + 15) / 16;
}

// Grid lines and labels (class `cls`) at the ticks, and the axes' lines.
std::string y_axis(const Axis& a, double x0, double x1, double top, double bottom,
                   const char* cls) {
  std::string out;
  for (const AxisTick& t : a.ticks) {
    double y = bottom - a.fraction(t.value) * (bottom - top);
    out += fmt::format(
        "<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{2:.1f}\" y2=\"{1:.1f}\" stroke=\"#e6e6e6\"/>"
        "<text class=\"{6}\" x=\"{3:.1f}\" y=\"{4:.1f}\" text-anchor=\"end\">{5}</text>\n",
        x0, y, x1, x0 - 5, y + 4, xml_escape(t.label), cls);
  }
  out += fmt::format(
      "<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"#444\"/>"
      "<line x1=\"{0:.1f}\" y1=\"{2:.1f}\" x2=\"{3:.1f}\" y2=\"{2:.1f}\" stroke=\"#444\"/>\n",
      x0, top, bottom, x1);
  return out;
}

// Where the chart's points go. Steady points far above the others are marked on the top edge
// instead of setting the scale; the steady panel spans the steady points' x range, right of the
// warm-up panel when there is one.
struct StepLayout {
  explicit StepLayout(const StepChart& c);

  double px(size_t i) const {
    double f = x_span > 0 ? (static_cast<double>(i) - static_cast<double>(x_lo)) / x_span : 0.5;
    return plot_left + 8 + f * (plot_right - plot_left - 16);
  }
  double py(const Axis& a, double y) const { return bottom - a.fraction(y) * (bottom - top); }
  std::string x_name(size_t i) const {
    return i < c.x_names.size() ? c.x_names[i] : fmt::format("{}", i);
  }
  bool has_warm() const { return !warm.empty(); }

  const StepChart& c;
  std::vector<double> warm;  // the warm-up points' values
  bool has_steady = false;
  size_t total_points = 0;
  double fence = INFINITY;  // above it, a steady point is off the scale
  size_t clipped = 0;       // steady points above the fence
  Axis ya;                  // the steady panel's
  double top = kTop, bottom = kHeight - kBottom, plot_left = kLeft, plot_right = kWidth - kRight;
  size_t x_lo = 0, x_hi = 0;  // the steady points' x range
  double x_span = 0;
};

StepLayout::StepLayout(const StepChart& chart) : c(chart) {
  size_t n = 0;
  std::vector<double> steady;
  std::vector<size_t> steady_x;
  for (const StepSeries& s : c.series) {
    n = std::max(n, s.ys.size());
    total_points += s.ys.size();
    for (size_t i = 0; i < s.ys.size(); ++i) {
      if (is_warmup(s, i)) {
        warm.push_back(s.ys[i]);
      } else {
        steady.push_back(s.ys[i]);
        steady_x.push_back(i);
      }
    }
  }
  has_steady = !steady_x.empty();
  // Points far above the steady state are marked at the top instead of setting the scale.
  if (steady.size() >= 8) {
    double q1 = quantile(steady, 0.25), q3 = quantile(steady, 0.75), med = quantile(steady, 0.5);
    fence = std::max(q3 + 3 * (q3 - q1), 1.5 * med);
  }
  double steady_max = 0;
  for (double y : steady) {
    if (y > fence)
      ++clipped;
    else
      steady_max = std::max(steady_max, y);
  }
  ya = linear_axis(0, steady.empty() ? 1 : steady_max, AxisQuantity::kDuration);
  top = kTop + (clipped ? 14 : 0);
  plot_left = kLeft + (has_warm() ? kWarmPanel + kGap : 0);
  x_lo = n, x_hi = 0;
  for (size_t x : steady_x) x_lo = std::min(x_lo, x), x_hi = std::max(x_hi, x);
  if (x_lo > x_hi) x_lo = x_hi = 0;
  x_span = static_cast<double>(x_hi - x_lo);
}

// The legend along the top: one swatch per series, and what hollow points mean.
void legend(const StepLayout& l, std::string& out) {
  const StepChart& c = l.c;
  double lx = kLeft;
  for (size_t k = 0; k < c.series.size(); ++k) {
    out += fmt::format(
        "<rect x=\"{0:.0f}\" y=\"8\" width=\"12\" height=\"12\" fill=\"{1}\"/>"
        "<text x=\"{2:.0f}\" y=\"18\">{3}</text>\n",
        lx, kPalette[k % 8], lx + 16, xml_escape(c.series[k].name));
    lx += 34 + 7.0 * static_cast<double>(c.series[k].name.size());
  }
  if (l.has_warm())
    out += fmt::format("<text x=\"{:.0f}\" y=\"18\" class=\"muted\">hollow: warm-up</text>\n", lx);
}

// The warm-up panel: one column per warm-up x (at most 12), its own scale from zero.
void warm_panel(const StepLayout& l, std::string& out) {
  const StepChart& c = l.c;
  const Axis wa =
      linear_axis(0, *std::max_element(l.warm.begin(), l.warm.end()), AxisQuantity::kDuration, 4);
  const double x0 = kLeft, x1 = kLeft + kWarmPanel;
  out += y_axis(wa, x0, x1, kTop, l.bottom, "wyt");
  out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">warm-up ({})</text>\n",
                     (x0 + x1) / 2, l.bottom + 32, xml_escape(wa.unit));
  std::vector<size_t> xs;
  for (const StepSeries& s : c.series)
    for (size_t i = 0; i < s.ys.size(); ++i)
      if (is_warmup(s, i) && std::find(xs.begin(), xs.end(), i) == xs.end()) xs.push_back(i);
  std::sort(xs.begin(), xs.end());
  const size_t shown = std::min<size_t>(xs.size(), 12);
  auto wx = [&](size_t i) {
    size_t k = static_cast<size_t>(std::find(xs.begin(), xs.end(), i) - xs.begin());
    return x0 + (static_cast<double>(std::min(k, shown - 1)) + 0.5) * (x1 - x0) /
                    static_cast<double>(shown);
  };
  for (size_t k = 0; k < shown; ++k)
    out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>\n",
                       wx(xs[k]), l.bottom + 14, xml_escape(l.x_name(xs[k])));
  for (size_t k = 0; k < c.series.size(); ++k) {
    const StepSeries& s = c.series[k];
    for (size_t i = 0; i < s.ys.size(); ++i)
      if (is_warmup(s, i))
        out += fmt::format(
            "<circle class=\"warm\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"4\" fill=\"#fff\" "
            "stroke=\"{}\" stroke-width=\"2\"><title>{} (warm-up)</title></circle>\n",
            wx(i), l.py(wa, s.ys[i]), kPalette[k % 8], xml_escape(tip(c, s, i)));
  }
}

// The steady-state panel's axes: the y scale, and a grid line per x (labelled every stride).
void steady_axes(const StepLayout& l, std::string& out) {
  const StepChart& c = l.c;
  out += y_axis(l.ya, l.plot_left, l.plot_right, l.top, l.bottom, "yt");
  out += fmt::format(
      "<text x=\"{0:.1f}\" y=\"{1:.1f}\" text-anchor=\"middle\" transform=\"rotate(-90 {0:.1f} "
      "{1:.1f})\">{2} ({3})</text>\n",
      l.plot_left - 48, (l.top + l.bottom) / 2, xml_escape(c.y_label), xml_escape(l.ya.unit));
  if (l.has_steady) {
    const size_t count = l.x_hi - l.x_lo + 1, stride = label_stride(count);
    for (size_t i = l.x_lo; i <= l.x_hi; ++i) {
      bool labelled = i % stride == 0;
      if (count <= 60 || labelled)
        out += fmt::format(
            "<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"{3}\"/>\n",
            l.px(i), l.top, l.bottom + (labelled ? 4 : 0), labelled ? "#ccc" : "#f0f0f0");
      if (labelled)
        out += fmt::format(
            "<text class=\"xt\" x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>\n",
            l.px(i), l.bottom + 16, xml_escape(l.x_name(i)));
    }
  }
  out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>\n",
                     (l.plot_left + l.plot_right) / 2, l.bottom + 34,
                     xml_escape(l.has_warm() ? c.x_label + " (steady state)" : c.x_label));
}

// One series in the steady panel: lines through its steady points, points off the scale as
// markers on the top edge with their value, and the others as circles unless there are too many.
void steady_series(const StepLayout& l, size_t k, std::string& out) {
  const StepSeries& s = l.c.series[k];
  const char* color = kPalette[k % 8];
  const bool circles = l.total_points <= kMostCircles;
  // Lines join consecutive steady points; a warm-up point in between breaks them.
  std::string pts;
  auto flush = [&]() {
    if (pts.find(' ') != pts.rfind(' '))  // at least two points
      out += fmt::format(
          "<polyline class=\"series\" points=\"{}\" fill=\"none\" stroke=\"{}\" "
          "stroke-width=\"1.5\"/>\n",
          pts, color);
    pts.clear();
  };
  for (size_t i = 0; i < s.ys.size(); ++i) {
    if (is_warmup(s, i)) {
      flush();
      continue;
    }
    double y = s.ys[i] > l.fence ? l.top - 8 : l.py(l.ya, s.ys[i]);
    pts += fmt::format("{:.1f},{:.1f} ", l.px(i), y);
  }
  flush();
  for (size_t i = 0; i < s.ys.size(); ++i) {
    if (is_warmup(s, i)) continue;
    if (s.ys[i] > l.fence) {
      double x = l.px(i), y = l.top - 8;
      out += fmt::format(
          "<path class=\"clipped\" d=\"M{0:.1f},{1:.1f} l5,8 l-10,0 z\" fill=\"{2}\">"
          "<title>{3} (off the scale)</title></path>"
          "<text x=\"{4:.1f}\" y=\"{5:.1f}\">{6}</text>\n",
          x, y - 6, color, xml_escape(tip(l.c, s, i)), x + 7, y + 2,
          xml_escape(axis_value_text(s.ys[i], AxisQuantity::kDuration)));
    } else if (circles) {
      out += fmt::format(
          "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"{}\"><title>{}</title></circle>\n",
          l.px(i), l.py(l.ya, s.ys[i]), color, xml_escape(tip(l.c, s, i)));
    }
  }
}

}  // namespace

std::string svg_step_chart(const StepChart& c) {
  const StepLayout l(c);
  std::string out = fmt::format(
      "<svg class=\"chart wide\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {} {}\" "
      "role=\"img\" data-y-unit=\"{}\" data-clipped=\"{}\">\n",
      kWidth, kHeight, xml_escape(l.ya.unit), l.clipped);
  legend(l, out);
  if (l.has_warm()) warm_panel(l, out);
  steady_axes(l, out);
  for (size_t k = 0; k < c.series.size(); ++k) steady_series(l, k, out);
  out += "</svg>\n";
  return out;
}

}  // namespace jaxprof
