// Chart axes of the report: round ticks in one unit on linear axes (never "810.245 ms"), powers of
// the base on log axes, ranges that hold the data and not much more.
#include "jaxprof/render/html/chart_axis.h"

#include <gtest/gtest.h>

#include <cmath>

#include "jaxprof/render/html/html_short_text.h"

namespace jaxprof {
namespace {

std::vector<std::string> labels(const Axis& a) {
  std::vector<std::string> out;
  for (const AxisTick& t : a.ticks) out.push_back(t.label);
  return out;
}

TEST(ChartAxis, LinearDurationsReadInOneUnit) {
  // The TPU step times that used to read "1.080 s, 810.245 ms ... 0 ps".
  Axis a = linear_axis(0, 982.115e9, AxisQuantity::kDuration);
  EXPECT_EQ(a.unit, "ms");
  EXPECT_EQ(labels(a), (std::vector<std::string>{"0", "200", "400", "600", "800", "1000"}));
  EXPECT_EQ(a.lo, 0);
  EXPECT_DOUBLE_EQ(a.hi, 1000e9);
  // Steady steps of about 2 ms: half-millisecond ticks.
  a = linear_axis(0, 2.083e9, AxisQuantity::kDuration);
  EXPECT_EQ(a.unit, "ms");
  EXPECT_EQ(labels(a), (std::vector<std::string>{"0", "0.5", "1.0", "1.5", "2.0", "2.5"}));
  // Microseconds.
  a = linear_axis(0, 587.481e6, AxisQuantity::kDuration);
  EXPECT_EQ(a.unit, "us");
  EXPECT_EQ(labels(a).back(), "600");
}

TEST(ChartAxis, LinearTicksAreEvenAndCoverTheRange) {
  for (double hi : {1.0, 7.3, 99.0, 1234.5, 3e6, 0.004}) {
    Axis a = linear_axis(0, hi, AxisQuantity::kCount);
    ASSERT_GE(a.ticks.size(), 3u) << hi;
    EXPECT_LE(a.ticks.size(), 12u) << hi;
    EXPECT_LE(a.lo, 0);
    EXPECT_GE(a.hi, hi);
    EXPECT_LT(a.hi, hi * 2.6) << hi;  // not much more than the data
    double step = a.ticks[1].value - a.ticks[0].value;
    for (size_t i = 1; i < a.ticks.size(); ++i)
      EXPECT_NEAR(a.ticks[i].value - a.ticks[i - 1].value, step, step * 1e-9);
  }
  // One value, or none: a range is made around it.
  Axis one = linear_axis(5, 5, AxisQuantity::kCount);
  EXPECT_LE(one.lo, 5);
  EXPECT_GE(one.hi, 5);
  EXPECT_GT(one.hi, one.lo);
  Axis zero = linear_axis(0, 0, AxisQuantity::kDuration);
  EXPECT_GT(zero.hi, zero.lo);
}

TEST(ChartAxis, LogBytesAroundTheData) {
  // The 8-device capture's two all-reduces, 4 B and 12612 B.
  Axis a = log_axis(4, 12612, AxisQuantity::kBytes);
  EXPECT_TRUE(a.log);
  EXPECT_LT(a.lo, 4);
  EXPECT_GT(a.hi, 12612);
  EXPECT_GT(a.lo, 0.5);       // not from 1 B or less
  EXPECT_LT(a.hi, 64 * 1024);  // not up to GiB
  for (const AxisTick& t : a.ticks) {
    double e = std::log2(t.value);
    EXPECT_EQ(e, std::round(e)) << t.label;
  }
  EXPECT_EQ(labels(a).front(), "4 B");
  EXPECT_LE(a.ticks.size(), 8u);
  // One message size: a little either side of it, not 2 B to 16 GiB.
  Axis one = log_axis(1 << 20, 1 << 20, AxisQuantity::kBytes);
  EXPECT_GE(one.lo, 256 * 1024);
  EXPECT_LE(one.hi, 4 << 20);
  EXPECT_GT(one.fraction(1 << 20), 0.3);
  EXPECT_LT(one.fraction(1 << 20), 0.7);
  EXPECT_EQ(labels(one), (std::vector<std::string>{"1 MiB"}));
}

TEST(ChartAxis, LogBandwidthDecades) {
  Axis a = log_axis(2.59e-5, 145, AxisQuantity::kBandwidth);
  std::vector<std::string> l = labels(a);
  ASSERT_FALSE(l.empty());
  for (const std::string& s : l) EXPECT_NE(s.find("B/s"), std::string::npos) << s;
  EXPECT_NE(std::find(l.begin(), l.end(), "1 GB/s"), l.end());
}

TEST(ChartAxis, ValueText) {
  EXPECT_EQ(axis_value_text(71.484e9, AxisQuantity::kDuration), "71.5 ms");
  EXPECT_EQ(axis_value_text(12612, AxisQuantity::kBytes), "12.3 KiB");
  EXPECT_EQ(axis_value_text(0.0204, AxisQuantity::kBandwidth), "20.4 MB/s");
  EXPECT_EQ(axis_value_text(0, AxisQuantity::kDuration), "0");
}

TEST(ShortText, OpPathsKeepTheirEnds) {
  std::string p =
      "pjit(_wrapped_step_fn)/jit(main)/transpose(jvp(xformer_lm.apply))/xformer_lm/"
      "xformer_lm.compute_predictions/lm/transformer/x_layers_4/self_attention/"
      "self_attention._dot_atten/dot_general[dimension_numbers=(((2,), (1,)), ((), ()))]";
  std::string s = short_op_path(p, 64);
  EXPECT_TRUE(s.starts_with("pjit(_wrapped_step_fn)/\u2026/")) << s;
  EXPECT_TRUE(s.ends_with("self_attention._dot_atten/dot_general")) << s;
  EXPECT_EQ(short_op_path("jit(f)/mul;jit(f)/add"), "jit(f)/mul (+1)");
  EXPECT_EQ(short_op_path("jit(f)/dot_general[precision=None]"), "jit(f)/dot_general");
  EXPECT_EQ(short_op_path(""), "");
  EXPECT_EQ(short_source("/opt/praxis/praxis/layers/attentions.py:1553"), "attentions.py:1553");
  EXPECT_EQ(short_source("main.py:3"), "main.py:3");
}

}  // namespace
}  // namespace jaxprof
