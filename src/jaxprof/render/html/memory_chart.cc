#include "jaxprof/render/html/memory_chart.h"

#include <fmt/format.h>

#include <algorithm>

#include "jaxprof/render/html/chart_axis.h"
#include "jaxprof/render/flame/flame_svg.h"
#include "jaxprof/common/units.h"

namespace jaxprof {
namespace {

constexpr int kWidth = 640, kHeight = 220, kLeft = 64, kRight = 16, kTop = 24, kBottom = 34;

}  // namespace

std::string svg_memory_timeline(const AllocatorMemory& a, int64_t from_ps, int64_t to_ps) {
  if (from_ps == 0 && to_ps == 0) {
    from_ps = a.first_ps;
    to_ps = a.last_ps;
  }
  if (to_ps <= from_ps) to_ps = from_ps + 1;
  double ymax = 1;
  bool reserved = false;
  for (const MemoryPoint& p : a.timeline) {
    ymax = std::max(ymax, static_cast<double>(p.in_use + p.reserved));
    reserved |= p.reserved != 0;
  }
  if (a.lifetime_peak_bytes_in_use)
    ymax = std::max(ymax, static_cast<double>(*a.lifetime_peak_bytes_in_use));
  // Round ticks in one unit, named in the axis titles (docs: render/html/chart_axis.h).
  const Axis ya = linear_axis(0, ymax, AxisQuantity::kBytes, 4);
  const Axis xa = linear_axis(static_cast<double>(from_ps), static_cast<double>(to_ps),
                              AxisQuantity::kDuration, 5);
  const double plot_w = kWidth - kLeft - kRight, plot_h = kHeight - kTop - kBottom;
  auto x_of = [&](int64_t t) { return kLeft + plot_w * xa.fraction(static_cast<double>(t)); };
  auto y_of = [&](double b) { return kTop + plot_h * (1 - ya.fraction(b)); };

  std::string title = a.device.empty() ? a.allocator : a.device + "  " + a.allocator;
  std::string out = fmt::format(
      "<svg class=\"chart memory\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" "
      "height=\"{1}\" viewBox=\"0 0 {0} {1}\" role=\"img\" font-size=\"11\" "
      "font-family=\"sans-serif\">\n<title>{2}: bytes in use over time</title>\n"
      "<text x=\"{3}\" y=\"14\" font-weight=\"bold\">{2}</text>\n",
      kWidth, kHeight, xml_escape(title), kLeft);
  for (const AxisTick& t : ya.ticks) {
    double y = y_of(t.value);
    out += fmt::format(
        "<line x1=\"{}\" x2=\"{}\" y1=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#e6e6e6\"/>"
        "<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n",
        kLeft, kWidth - kRight, y, y, kLeft - 4, y + 4, xml_escape(t.label));
  }
  out += fmt::format(
      "<text transform=\"translate(12,{:.1f}) rotate(-90)\" text-anchor=\"middle\">in use ({})"
      "</text>\n",
      kTop + plot_h / 2, xml_escape(ya.unit));
  for (const AxisTick& t : xa.ticks)
    out += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n",
                       kLeft + plot_w * xa.fraction(t.value), kHeight - kBottom + 16,
                       xml_escape(t.label));
  out += fmt::format(
      "<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2:.1f}\" stroke=\"#444\"/>"
      "<line x1=\"{0}\" y1=\"{2:.1f}\" x2=\"{3}\" y2=\"{2:.1f}\" stroke=\"#444\"/>\n"
      "<text x=\"{4:.1f}\" y=\"{5}\" text-anchor=\"middle\">time since the profile start ({6})"
      "</text>\n",
      kLeft, kTop, kTop + plot_h, kWidth - kRight, kLeft + plot_w / 2, kHeight - 4,
      xml_escape(xa.unit));

  // Step paths: the state after each event holds until the next one.
  auto path = [&](bool with_reserved) {
    std::string d;
    for (size_t i = 0; i < a.timeline.size(); ++i) {
      const MemoryPoint& p = a.timeline[i];
      double y = y_of(static_cast<double>(p.in_use + (with_reserved ? p.reserved : 0)));
      double x = x_of(p.time_ps);
      if (i == 0) {
        d += fmt::format("M{:.1f},{:.1f}", x, y);
      } else {
        d += fmt::format("H{:.1f}V{:.1f}", x, y);
      }
    }
    if (!a.timeline.empty()) d += fmt::format("H{:.1f}", x_of(a.last_ps));
    return d;
  };
  if (reserved)
    out += fmt::format(
        "<path d=\"{}\" fill=\"none\" stroke=\"#f28e2b\" stroke-width=\"1.5\"><title>in use + "
        "reserved</title></path>\n",
        path(true));
  out += fmt::format(
      "<path d=\"{}\" fill=\"none\" stroke=\"#4e79a7\" stroke-width=\"1.5\"><title>bytes in "
      "use</title></path>\n",
      path(false));
  // Legend, top right.
  int lx = kWidth - kRight;
  auto legend = [&](const char* color, const char* text) {
    lx -= static_cast<int>(6.2 * static_cast<double>(std::string_view(text).size())) + 26;
    out += fmt::format(
        "<line x1=\"{}\" x2=\"{}\" y1=\"10\" y2=\"10\" stroke=\"{}\" stroke-width=\"2\"/>"
        "<text x=\"{}\" y=\"14\">{}</text>\n",
        lx, lx + 16, color, lx + 20, text);
  };
  if (reserved) legend("#f28e2b", "in use + reserved");
  legend("#4e79a7", "in use");
  if (a.lifetime_peak_bytes_in_use && a.peak_bytes_in_use &&
      *a.lifetime_peak_bytes_in_use > *a.peak_bytes_in_use) {
    double y = y_of(static_cast<double>(*a.lifetime_peak_bytes_in_use));
    out += fmt::format(
        "<line x1=\"{}\" x2=\"{}\" y1=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#e15759\" "
        "stroke-dasharray=\"4 3\"><title>the allocator's peak before the capture: {}</title></line>"
        "<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\" fill=\"#e15759\">peak before the capture "
        "{}</text>\n",
        kLeft, kWidth - kRight, y, y,
        xml_escape(human_bytes(static_cast<double>(*a.lifetime_peak_bytes_in_use))),
        kWidth - kRight, y - 3,
        xml_escape(human_bytes(static_cast<double>(*a.lifetime_peak_bytes_in_use))));
  }
  if (a.peak_bytes_in_use) {
    double x = x_of(a.peak_ps), y = y_of(static_cast<double>(*a.peak_bytes_in_use));
    std::string label =
        fmt::format("peak {} at {}", human_bytes(static_cast<double>(*a.peak_bytes_in_use)),
                    human_duration(static_cast<double>(a.peak_ps)));
    bool right = x < kLeft + plot_w * 0.6;
    out += fmt::format(
        "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"4\" fill=\"#e15759\"><title>{}</title></circle>"
        "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"{}\" fill=\"#e15759\">{}</text>\n",
        x, y, xml_escape(label), right ? x + 7 : x - 7, std::max<double>(y - 6, kTop + 10),
        right ? "start" : "end", xml_escape(label));
  }
  out += "</svg>\n";
  return out;
}

std::vector<std::string> svg_memory_timelines(const MemoryTimeline& timeline) {
  int64_t from = INT64_MAX, to = INT64_MIN;
  for (const AllocatorMemory& a : timeline.allocators) {
    from = std::min(from, a.first_ps);
    to = std::max(to, a.last_ps);
  }
  std::vector<std::string> out;
  for (const AllocatorMemory& a : timeline.allocators)
    if (a.peak_bytes_in_use) out.push_back(svg_memory_timeline(a, from, to));
  return out;
}

}  // namespace jaxprof
