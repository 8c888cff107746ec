// Small inline SVG charts for the HTML report: stacked bars, a log-x scatter and a line plot.
// They are drawn here (no charting library) so that the report opens with no network and no
// external script. Every label is escaped; callers pass raw profile text.
#pragma once

#include <string>
#include <vector>

namespace jaxprof {

// One horizontal bar split into parts (values in any unit; the bar shows their shares).
struct StackedBar {
  std::string label;
  std::string note;            // printed after the bar, e.g. the span
  std::vector<double> values;  // one per legend entry
};
struct ChartLegend {
  std::string name;
  std::string color;  // CSS colour, written by the caller (not profile text)
};
std::string svg_stacked_bars(const std::vector<StackedBar>& bars,
                             const std::vector<ChartLegend>& legend);

struct ScatterPoint {
  double x = 0, y = 0;
  std::string label;  // tooltip
};
// x on a log2 scale (message sizes span orders of magnitude), y linear from 0.
std::string svg_scatter(const std::vector<ScatterPoint>& points, const std::string& x_label,
                        const std::string& y_label);

struct LineSeries {
  std::string name;
  std::vector<double> ys;         // at x = 0, 1, 2, ...
  std::vector<std::string> tips;  // per point; default "name #i: value"
};
// y values are picoseconds; the axis is labelled as durations.
// `x_ticks`, when given, labels x = 0, 1, ... (at most about 20 labels drawn) and draws a faint
// vertical line at each x, e.g. one per step.
std::string svg_duration_lines(const std::vector<LineSeries>& series, const std::string& x_label,
                               const std::vector<std::string>& x_ticks = {});

struct SignedBar {
  std::string label;
  double value = 0;  // picoseconds; positive to the right (slower), negative to the left
  std::string note;  // tooltip after the value
};
// Horizontal bars either side of a zero line, one per row, scaled to the largest |value|: the
// biggest changes of a diff at a glance.
std::string svg_signed_duration_bars(const std::vector<SignedBar>& bars);

}  // namespace jaxprof
