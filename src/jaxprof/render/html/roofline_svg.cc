#include "jaxprof/render/html/roofline_svg.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <vector>

#include "jaxprof/common/units.h"
#include "jaxprof/render/flame/flame_svg.h"

namespace jaxprof {
namespace {

constexpr int kW = 720, kH = 420, kL = 78, kR = 170, kT = 24, kB = 48;

// Colours by category name (written here, never taken from the profile).
const char* category_color(std::string_view c) {
  if (c == "gemm") return "#1f77b4";
  if (c == "convolution") return "#9467bd";
  if (c == "attention") return "#d62728";
  if (c == "elementwise/fusion") return "#2ca02c";
  if (c == "collective") return "#ff7f0e";
  if (c == "memcpy") return "#8c564b";
  return "#7f7f7f";
}

std::string rate_label(double flops_per_s) { return format_value(Measure::kFlopRate, flops_per_s); }

// A tick of the rate axis at a power of ten, short enough for the margin: "100 MFLOP/s",
// "10 kFLOP/s", "1 FLOP/s" (the tables' FLOP/s units have no k, and print two decimals).
std::string rate_tick(double flops_per_s) {
  static constexpr std::pair<double, const char*> kPrefixes[] = {
      {1e18, "E"}, {1e15, "P"}, {1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}};
  for (const auto& [scale, prefix] : kPrefixes)
    if (flops_per_s >= scale * 0.999)
      return fmt::format("{:g} {}FLOP/s", std::round(flops_per_s / scale * 1000) / 1000, prefix);
  return fmt::format("{:g} FLOP/s", flops_per_s);
}

}  // namespace

std::string roofline_svg(const RooflineDevice& d) {
  struct Point {
    double x, y, r;
    const RooflineOp* op;
  };
  std::vector<Point> points;
  int64_t total = 0;
  size_t not_drawn = 0;
  for (const RooflineOp& o : d.ops) total += o.figures.time_ps;
  double xmin = 1e300, xmax = 0, ymin = 1e300, ymax = 0;
  for (const RooflineOp& o : d.ops) {
    const RooflineFigures& f = o.figures;
    if (!f.intensity || !f.flop_rate || *f.intensity <= 0 || *f.flop_rate <= 0) {
      ++not_drawn;
      continue;
    }
    const double share =
        total > 0 ? static_cast<double>(f.time_ps) / static_cast<double>(total) : 0;
    points.push_back({*f.intensity, *f.flop_rate, 3 + 22 * std::sqrt(share), &o});
    xmin = std::min(xmin, *f.intensity);
    xmax = std::max(xmax, *f.intensity);
    ymin = std::min(ymin, *f.flop_rate);
    ymax = std::max(ymax, *f.flop_rate);
  }
  // The ceilings: the memory slope and each peak the ops are held to.
  std::set<ComputeType> used;
  for (const RooflineOp& o : d.ops)
    if (o.peak_flops_per_s > 0) used.insert(o.peak_type);
  std::vector<std::pair<std::string, double>> ceilings;
  for (ComputeType t : used) {
    ComputeType u;
    const double v = d.peaks.flops_for(t, u);
    if (v > 0) ceilings.emplace_back(compute_type_name(u), v);
  }
  std::sort(ceilings.begin(), ceilings.end(),
            [](const auto& a, const auto& b) { return a.second > b.second; });
  ceilings.erase(std::unique(ceilings.begin(), ceilings.end()), ceilings.end());
  const double bw = d.peaks.bytes_per_s;
  for (const auto& [name, v] : ceilings) {
    ymax = std::max(ymax, v);
    if (bw > 0) {
      xmin = std::min(xmin, v / bw / 100);
      xmax = std::max(xmax, v / bw * 10);
    }
  }
  if (points.empty() && ceilings.empty()) {
    return fmt::format(
        "<svg class=\"chart roofline\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" "
        "height=\"60\" viewBox=\"0 0 {0} 60\" role=\"img\"><text x=\"10\" y=\"30\">{1}: no op has "
        "both FLOPs and a known rate to draw</text></svg>\n",
        kW, xml_escape(d.device));
  }
  if (xmax <= 0) xmin = 0.1, xmax = 100;
  if (ymax <= 0) ymin = 1e9, ymax = 1e12;
  // Whole decades, with room so that no point sits on an axis.
  const double lx0 = std::floor(std::log10(xmin) - 0.3), lx1 = std::ceil(std::log10(xmax) + 0.1);
  const double ly0 = std::floor(std::log10(std::min(ymin, ymax / 1e4)) - 0.3),
               ly1 = std::ceil(std::log10(ymax * 1.5));
  auto px = [&](double x) {
    return kL + (std::log10(x) - lx0) / std::max(lx1 - lx0, 1.0) * (kW - kL - kR);
  };
  auto py = [&](double y) {
    return kH - kB - (std::log10(y) - ly0) / std::max(ly1 - ly0, 1.0) * (kH - kT - kB);
  };
  std::string out = fmt::format(
      "<svg class=\"chart roofline\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" "
      "height=\"{1}\" viewBox=\"0 0 {0} {1}\" role=\"img\" font-family=\"sans-serif\" "
      "font-size=\"11\">\n<title>Roofline of {2}</title>\n"
      "<text x=\"{3}\" y=\"14\" font-weight=\"bold\">{2}</text>\n",
      kW, kH, xml_escape(d.device), kL);
  out += fmt::format(
      "<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"#444\"/>"
      "<line x1=\"{0}\" y1=\"{3}\" x2=\"{0}\" y2=\"{1}\" stroke=\"#444\"/>\n",
      kL, kH - kB, kW - kR, kT);
  for (double e = lx0; e <= lx1; ++e) {
    const double x = px(std::pow(10, e));
    out += fmt::format(
        "<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#eee\"/>"
        "<text x=\"{0:.1f}\" y=\"{3}\" text-anchor=\"middle\">{4:g}</text>\n",
        x, kT, kH - kB, kH - kB + 14, std::pow(10, e));
  }
  for (double e = ly0; e <= ly1; ++e) {
    const double y = py(std::pow(10, e));
    out += fmt::format(
        "<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\" stroke=\"#eee\"/>"
        "<text x=\"{3}\" y=\"{4:.1f}\" text-anchor=\"end\">{5}</text>\n",
        kL, y, kW - kR, kL - 4, y + 4, rate_tick(std::pow(10, e)));
  }
  out += fmt::format(
      "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">arithmetic intensity (FLOPs per "
      "byte)</text>\n",
      (kL + kW - kR) / 2, kH - 8);
  // Ceilings: min(peak, intensity x bandwidth), drawn across the x range.
  for (const auto& [name, v] : ceilings) {
    const double x0 = std::pow(10, lx0), x1 = std::pow(10, lx1);
    std::string path;
    if (bw > 0) {
      const double ridge = v / bw;
      const double start = std::max(x0, std::pow(10, ly0) / bw);
      path = fmt::format("M{:.1f},{:.1f} ", px(start), py(start * bw));
      if (ridge > x0 && ridge < x1) path += fmt::format("L{:.1f},{:.1f} ", px(ridge), py(v));
      path += fmt::format("L{:.1f},{:.1f}", px(x1), py(std::min(v, x1 * bw)));
    } else {
      path = fmt::format("M{:.1f},{:.1f} L{:.1f},{:.1f}", px(x0), py(v), px(x1), py(v));
    }
    out += fmt::format(
        "<path d=\"{}\" fill=\"none\" stroke=\"#222\" stroke-width=\"1.5\"/>"
        "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\">{} {}</text>\n",
        path, px(x1) - 2, py(v) - 4, name, rate_label(v));
  }
  // Largest first, so small points stay visible on top.
  std::sort(points.begin(), points.end(), [](const Point& a, const Point& b) { return a.r > b.r; });
  for (const Point& p : points) {
    const RooflineOp& o = *p.op;
    const RooflineFigures& f = o.figures;
    std::string tip = fmt::format("{} ({}) {} in {} executions, {} FLOPs/byte, {}", o.name,
                                  o.module, human_duration(static_cast<double>(f.time_ps)), o.count,
                                  number(*f.intensity), rate_label(*f.flop_rate));
    if (f.efficiency) tip += fmt::format(", {} of attainable", human_percent(*f.efficiency));
    tip += fmt::format(", {}-bound, {}", bound_name(f.bound), o.category);
    out += fmt::format(
        "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"{:.1f}\" fill=\"{}\" fill-opacity=\"0.6\" "
        "stroke=\"#333\" stroke-width=\"0.5\"><title>{}</title></circle>\n",
        px(p.x), py(p.y), p.r, category_color(o.category), xml_escape(tip));
  }
  // Legend: the categories drawn.
  std::set<std::string> categories;
  for (const Point& p : points) categories.insert(p.op->category);
  int ly = kT + 6;
  for (const std::string& c : categories) {
    out += fmt::format(
        "<circle cx=\"{}\" cy=\"{}\" r=\"5\" fill=\"{}\" fill-opacity=\"0.6\"/>"
        "<text x=\"{}\" y=\"{}\">{}</text>\n",
        kW - kR + 16, ly, category_color(c), kW - kR + 26, ly + 4, xml_escape(c));
    ly += 16;
  }
  if (not_drawn > 0)
    out += fmt::format(
        "<text x=\"{}\" y=\"{}\">{} ops not drawn</text><text x=\"{}\" y=\"{}\">"
        "(no FLOPs, or no cost)</text>\n",
        kW - kR + 10, ly + 10, not_drawn, kW - kR + 10, ly + 24);
  out += "</svg>\n";
  return out;
}

std::string roofline_svg_stack(const std::vector<RooflineDevice>& devices) {
  if (devices.size() == 1) return roofline_svg(devices[0]);
  std::string body;
  int y = 0;
  for (const RooflineDevice& d : devices) {
    std::string one = roofline_svg(d);
    // Nested <svg> elements take x/y: place each chart under the previous one.
    const size_t at = one.find("<svg ");
    if (at != std::string::npos) one.insert(at + 5, fmt::format("y=\"{}\" ", y));
    body += one;
    y += one.find("height=\"60\"") != std::string::npos ? 60 : kH;
  }
  return fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} "
      "{1}\">\n{2}</svg>\n",
      kW, y, body);
}

}  // namespace jaxprof
