// Small inline SVG charts for the HTML report: stacked bars and signed bars (the scatter and
// the step chart have files of their own).
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

struct SignedBar {
  std::string label;
  double value = 0;  // picoseconds; positive to the right (slower), negative to the left
  std::string note;  // tooltip after the value
};
// Horizontal bars either side of a zero line, one per row, scaled to the largest |value|: the
// biggest changes of a diff at a glance.
std::string svg_signed_duration_bars(const std::vector<SignedBar>& bars);

}  // namespace jaxprof
