// The one number format (common/units.h), tables that format whole columns (render/text/text.h) and
// the natural device order.
#include "jaxprof/common/units.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "jaxprof/analysis/ops/natural_order.h"
#include "jaxprof/render/text/text.h"

namespace jaxprof {
namespace {

const std::string kDash = "\xe2\x80\x94";  // —

TEST(Units, LoneValuesPickTheLargestUnitAtLeastOne) {
  EXPECT_EQ(human_duration(1.080e12), "1.080 s");
  EXPECT_EQ(human_duration(810.245e9), "810.245 ms");
  EXPECT_EQ(human_duration(5123e3), "5.123 us");
  EXPECT_EQ(human_duration(812e3), "812.0 ns");
  EXPECT_EQ(human_duration(500), "500 ps");
  EXPECT_EQ(human_duration(-2.5e9), "-2.500 ms");
  // The message size the issue saw three ways: one way now.
  EXPECT_EQ(human_bytes(6817.9 * 1024), "6.7 MiB");
  EXPECT_EQ(human_bytes(5368709120.0), "5.00 GiB");
  EXPECT_EQ(human_bytes(4), "4 B");
  EXPECT_EQ(human_bandwidth(12.3456), "12.35 GB/s");
  EXPECT_EQ(human_bandwidth(2.264e-9), "2.26 B/s");  // never an exponent
  EXPECT_EQ(human_percent(0.1234), "12.3%");
}

TEST(Units, ZeroIsZeroAndUnknownIsADash) {
  EXPECT_EQ(human_duration(0), "0");
  EXPECT_EQ(human_bytes(0), "0");
  EXPECT_EQ(human_bandwidth(0), "0");
  EXPECT_EQ(human_percent(0), "0");
  EXPECT_EQ(human_duration(std::nan("")), kDash);
  EXPECT_EQ(format_value(Measure::kBytes, std::nullopt), kDash);
  EXPECT_EQ(format_value(Measure::kPercent, std::nullopt), kDash);
  EXPECT_EQ(human_duration(std::numeric_limits<double>::infinity()), kDash);
}

TEST(Units, PlainNumbersHaveFourSignificantDigitsAndNoExponent) {
  EXPECT_EQ(format_value(Measure::kNumber, 0.123456), "0.1235");
  EXPECT_EQ(format_value(Measure::kNumber, 1234567.0), "1234567");
  EXPECT_EQ(format_value(Measure::kNumber, 2.0), "2");
  EXPECT_EQ(format_value(Measure::kNumber, 1e-9), "<0.0001");
}

TEST(Units, AColumnReadsInOneUnit) {
  // The largest value decides: 1.2 s and 810 ms read in seconds...
  std::vector<double> a = {1.2e12, 810e9, 0};
  UnitScale s = column_scale(Measure::kDuration, a);
  EXPECT_EQ(s.unit, "s");
  EXPECT_EQ(format_in(810e9, s, false), "0.810");
  EXPECT_EQ(format_in(0.0, s, false), "0");
  // ...unless a smaller value would read as zero: then a smaller unit, while the largest keeps
  // at most six digits before the point.
  std::vector<double> b = {1.2e12, 5e6};  // 1.2 s and 5 us
  s = column_scale(Measure::kDuration, b);
  EXPECT_EQ(s.unit, "ms");
  EXPECT_EQ(format_in(1.2e12, s, false), "1200.000");
  EXPECT_EQ(format_in(5e6, s, false), "0.005");
  std::vector<double> c = {1e15, 1};  // 1000 s and 1 ps: too far apart to show both
  s = column_scale(Measure::kDuration, c);
  EXPECT_EQ(format_in(1.0, s, false), "<0.001");
  // Sizes are binary, bandwidths decimal.
  std::vector<double> sizes = {6.66 * 1024 * 1024, 2 * 1024 * 1024};
  EXPECT_EQ(column_scale(Measure::kBytes, sizes).unit, "MiB");
  std::vector<double> bw = {2.264e-9};
  EXPECT_EQ(column_scale(Measure::kBandwidth, bw).unit, "B/s");
}

TEST(Units, FlopsAndFlopRatesUseDecimalPrefixes) {
  EXPECT_EQ(format_value(Measure::kFlops, 2.68e9), "2.68 G");
  EXPECT_EQ(format_value(Measure::kFlops, 512.0), "512");
  EXPECT_EQ(format_value(Measure::kFlopRate, 8.737e10), "87.37 GFLOP/s");
  std::vector<double> rates = {989e12, 3e12};
  UnitScale s = column_scale(Measure::kFlopRate, rates);
  EXPECT_EQ(s.unit, "TFLOP/s");
  EXPECT_EQ(format_in(3e12, s, false), "3.00");
  EXPECT_EQ(format_in(std::nullopt, s, false), "\u2014");
}

TEST(Table, MeasuredColumnsNameTheirUnitAndShowUnknown) {
  Table t({{"op"},
           {"count", Measure::kCount},
           {"total", Measure::kDuration},
           {"size", Measure::kBytes},
           {"share", Measure::kShare}});
  t.add({"a", 3, 2.5e9, 4096.0, 0.5});
  t.add({"b", 0, int64_t{0}, Cell::unknown(), 0.0});
  std::string text = t.render();
  EXPECT_NE(text.find("total (ms)"), std::string::npos) << text;
  EXPECT_NE(text.find("size (KiB)"), std::string::npos) << text;
  EXPECT_NE(text.find("2.500"), std::string::npos) << text;
  EXPECT_NE(text.find("50.0%"), std::string::npos) << text;
  EXPECT_NE(text.find(kDash), std::string::npos) << text;
  EXPECT_EQ(text.find("0 ps"), std::string::npos) << text;
  EXPECT_EQ(text.find(" 0.0%"), std::string::npos) << text;
}

TEST(Table, TextRowsStillWork) {
  Table t({"name", "value"}, {false, true});
  std::vector<std::string> row = {"x", "12 things"};
  t.add(row);
  t.add({"y", "3"});
  EXPECT_EQ(t.render(), "name      value\n----  ---------\nx     12 things\ny             3\n");
}

TEST(Table, LongNamesKeepWhatTellsThemApart) {
  // Two kernels that differ only in the middle (tile sizes): a cut in the middle would print
  // both the same.
  std::string common_head = "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_";
  std::string common_tail = "_32x3_nn_align4>(Params)_with_a_long_tail_of_arguments";
  Table t({{"kernel"}, {"count", Measure::kCount}});
  t.add({common_head + "128x128" + common_tail, 1});
  t.add({common_head + "256x64" + common_tail, 2});
  std::string text = t.render(40);
  EXPECT_NE(text.find("128x128"), std::string::npos) << text;
  EXPECT_NE(text.find("256x64"), std::string::npos) << text;
  for (size_t pos = 0, nl; (nl = text.find('\n', pos)) != std::string::npos; pos = nl + 1)
    EXPECT_LE(text_width(std::string_view(text).substr(pos, nl - pos)), 40u + 2 + 5);
  // --wide: nothing is cut.
  set_table_layout({.wide = true});
  std::string wide = t.render(40);
  set_table_layout({});
  EXPECT_NE(wide.find(common_head + "256x64" + common_tail), std::string::npos) << wide;
}

TEST(Table, NamesThatDifferAtTheEndsKeepBothEnds) {
  EXPECT_EQ(cut_text("abcdefghijklmnopqrstuvwxyz", 9), "abcd\xe2\x80\xa6wxyz");
  EXPECT_EQ(cut_text("short", 9), "short");
}

TEST(Table, FitsTheTerminalWidth) {
  Table t({{"name"}, {"source"}, {"total", Measure::kDuration}});
  for (int i = 0; i < 3; ++i)
    t.add({std::string(70, 'n') + std::to_string(i), std::string(70, 's') + std::to_string(i),
           1e9 * (i + 1)});
  set_table_layout({.line_width = 80});
  std::string text = t.render(60);
  set_table_layout({});
  for (size_t pos = 0, nl; (nl = text.find('\n', pos)) != std::string::npos; pos = nl + 1)
    EXPECT_LE(text_width(std::string_view(text).substr(pos, nl - pos)), 80u) << text;
  EXPECT_NE(text.find("n0"), std::string::npos) << text;  // the ends that differ survive
}

TEST(NaturalOrder, CountsLikePeople) {
  EXPECT_TRUE(natural_less("/device:GPU:2", "/device:GPU:10"));
  EXPECT_FALSE(natural_less("/device:GPU:10", "/device:GPU:2"));
  EXPECT_TRUE(natural_less("/device:CPU:0", "/device:GPU:0"));
  EXPECT_TRUE(natural_less("/device:TPU:1", "/device:TPU:1 SparseCore 0"));
  EXPECT_FALSE(natural_less("a", "a"));
  EXPECT_TRUE(natural_less("x9y", "x10y"));
  EXPECT_TRUE(natural_less("x1", "x01"));  // equal numbers: fewer zeros first, still strict
}

}  // namespace
}  // namespace jaxprof
