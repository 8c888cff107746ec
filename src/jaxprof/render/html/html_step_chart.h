// The report's step-time chart, scaled for the steady state: warm-up points (compile, first
// execution) sit in a panel of their own on the left with their own scale, so that one slow first
// step does not flatten the rest; steady points far above the others (more than three
// interquartile ranges above the third quartile and 1.5 times the median) are drawn as markers on
// the top edge with their value, not stretched into the scale. The chart spans the page's width
// (an SVG viewBox scaled by CSS), its ticks are round numbers in one unit per axis.
#pragma once

#include <string>
#include <vector>

namespace jaxprof {

struct StepSeries {
  std::string name;
  std::vector<double> ys;         // picoseconds, at x = 0, 1, 2, ...
  std::vector<bool> warmup;       // per point; empty when none is
  std::vector<std::string> tips;  // per point; default "name x: value"
};

struct StepChart {
  std::string x_label;               // "step", "execution"
  std::vector<std::string> x_names;  // per x (step numbers); default the index
  std::string y_label = "time";      // the unit is appended: "step time (ms)"
  std::vector<StepSeries> series;
};

// Ticks, panels, clipped points and the legend as an inline SVG with class "chart wide".
std::string svg_step_chart(const StepChart& chart);

}  // namespace jaxprof
