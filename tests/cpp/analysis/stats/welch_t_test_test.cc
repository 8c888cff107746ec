// The test over per-capture medians: the t distribution against closed forms (1 and 2 degrees of
// freedom) and Welch's test against SciPy 1.17 (scipy.stats.ttest_ind(log(new), log(base),
// equal_var=False, alternative=...)).
#include "jaxprof/analysis/stats/welch_t_test.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <vector>

namespace jaxprof {
namespace {

TEST(StudentT, MatchesClosedForms) {
  for (double t : {-3.0, -0.4, 0.0, 0.7, 2.0, 12.0}) {
    // df = 1 is the Cauchy distribution; df = 2 has P(T > t) = 1/2 - t / (2 sqrt(2 + t^2)).
    EXPECT_NEAR(student_t_upper(t, 1), 0.5 - std::atan(t) / std::numbers::pi, 1e-13) << t;
    EXPECT_NEAR(student_t_upper(t, 2), 0.5 - t / (2 * std::sqrt(2 + t * t)), 1e-13) << t;
  }
  EXPECT_NEAR(student_t_upper(2.5, 7.3), 0.019825117332800214, 1e-12);  // scipy t.sf
  EXPECT_NEAR(student_t_quantile_upper(0.025, 4.2), 2.725072722592375, 1e-9);
  EXPECT_NEAR(student_t_quantile_upper(0.975, 4.2), -2.725072722592375, 1e-9);
  // Cauchy quantile: tan(pi (1/2 - p)).
  EXPECT_NEAR(student_t_quantile_upper(0.1, 1), std::tan(std::numbers::pi * 0.4), 1e-9);
}

TEST(CaptureTest, WelchOnLogMedians) {
  std::vector<double> base{1.00, 1.21, 0.93}, now{2.4, 2.9, 2.55, 2.7};
  CaptureTest r = capture_t_test(base, now);
  ASSERT_TRUE(r.tested);
  EXPECT_TRUE(r.log_scale);
  EXPECT_NEAR(r.t, 10.514406347877442, 1e-10);
  EXPECT_NEAR(r.df, 3.0563773889196173, 1e-10);
  EXPECT_NEAR(r.p_greater, 0.0008459601917160116, 1e-12);
  EXPECT_NEAR(r.p_two_sided, 0.0016919203834320233, 1e-12);
  EXPECT_NEAR(r.ratio_low, 1.9156329212048535, 1e-9);
  EXPECT_NEAR(r.ratio_high, 3.340145771608971, 1e-9);
  // The ratio of geometric means, by hand.
  double gb = std::cbrt(1.00 * 1.21 * 0.93), gn = std::pow(2.4 * 2.9 * 2.55 * 2.7, 0.25);
  EXPECT_NEAR(r.ratio, gn / gb, 1e-12);
  // Against BASE * 1.05: the budget shifts the log difference by log(1.05).
  CaptureTest s = capture_t_test(base, now, 1.05);
  EXPECT_NEAR(s.t, 9.961623664284861, 1e-10);
  EXPECT_NEAR(s.p_greater, 0.000994036200703562, 1e-12);
  EXPECT_NEAR(s.ratio, r.ratio, 1e-12);
}

TEST(CaptureTest, SingleCaptureBorrowsTheOtherSidesSpread) {
  std::vector<double> base{1.1}, now{2.4, 2.9, 2.55, 2.7};
  CaptureTest r = capture_t_test(base, now);
  ASSERT_TRUE(r.tested);
  EXPECT_DOUBLE_EQ(r.df, 3);
  // t = (mean log new - log 1.1) / sqrt(var(log new) (1 + 1/4)).
  EXPECT_NEAR(r.t, 9.65764892463777, 1e-10);
  EXPECT_NEAR(r.p_greater, 0.0011784544827384816, 1e-12);
}

TEST(CaptureTest, NeedsThreeCapturesInAll) {
  std::vector<double> one{1.0}, two{1.0, 2.0};
  EXPECT_FALSE(capture_t_test(one, one).tested);
  EXPECT_FALSE(capture_t_test({}, two).tested);
  EXPECT_TRUE(capture_t_test(one, two).tested);
}

TEST(CaptureTest, ZeroSummariesFallBackToTheLinearScale) {
  // An op that did not run in most executions of a capture has a median of 0.
  std::vector<double> base{0.0, 1.0, 2.0}, now{3.0, 4.0, 5.0};
  CaptureTest r = capture_t_test(base, now);
  EXPECT_FALSE(r.log_scale);
  // Means 1 and 4, variances 1 and 1: t = 3 / sqrt(2/3), df = 4 (equal variances and sizes).
  EXPECT_NEAR(r.t, 3 / std::sqrt(2.0 / 3), 1e-12);
  EXPECT_NEAR(r.df, 4, 1e-12);
}

TEST(CaptureTest, IdenticalCapturesDecideBySign) {
  std::vector<double> base{2, 2, 2}, now{3, 3, 3};
  CaptureTest r = capture_t_test(base, now, 1.2);
  EXPECT_EQ(r.p_greater, 0);
  EXPECT_EQ(r.p_less, 1);
  EXPECT_EQ(capture_t_test(base, now, 2.0).p_greater, 1);
}

TEST(CaptureMedians, SplitsByCapture) {
  std::vector<double> samples{5, 1, 3, 10, 20, 7, 9};
  std::vector<size_t> sizes{3, 0, 2, 2};
  EXPECT_EQ(capture_medians(samples, sizes), (std::vector<double>{3, 15, 8}));
}

}  // namespace
}  // namespace jaxprof
