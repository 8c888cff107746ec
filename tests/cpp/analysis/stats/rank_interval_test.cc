// The estimate and interval that go with the Mann-Whitney test (rank_interval.h) and the verdict
// machinery of effect.h: against a direct computation from every pairwise ratio, and against the
// test itself, so that what diff and check show is what they tested.
#include "jaxprof/analysis/stats/rank_interval.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "jaxprof/analysis/stats/effect.h"
#include "jaxprof/analysis/stats/significance.h"

namespace jaxprof {
namespace {

std::vector<double> pairwise_ratios(const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> d;
  for (double x : a)
    for (double y : b) d.push_back(y / x);
  std::sort(d.begin(), d.end());
  return d;
}

std::vector<double> lognormal(std::mt19937_64& rng, size_t n, double center, double spread) {
  std::normal_distribution<double> z(0, spread);
  std::vector<double> v;
  for (size_t i = 0; i < n; ++i) v.push_back(center * std::exp(z(rng)));
  return v;
}

TEST(RankInterval, SmallSamplesMatchTheOrderStatisticsOfThePairwiseRatios) {
  // Exact case: the interval is [D(c + 1), D(nm - c)] of the sorted pairwise ratios, c the
  // largest U with P(U <= c) < alpha / 2.
  std::mt19937_64 rng(7);
  for (size_t n : {5, 8, 12}) {
    std::vector<double> a = lognormal(rng, n, 100, 0.2), b = lognormal(rng, n + 3, 130, 0.2);
    std::vector<double> d = pairwise_ratios(a, b);
    std::vector<double> f = mann_whitney_u_counts(a.size(), b.size());
    double total = 0;
    for (double x : f) total += x;
    size_t c = 0;
    double below = 0;
    bool any = false;
    for (size_t k = 0; k < f.size(); ++k) {
      below += f[k] / total;
      if (below < 0.005) c = k, any = true;
    }
    ASSERT_TRUE(any) << n;
    RatioInterval r = mann_whitney_ratio(a, b, 0.01);
    EXPECT_NEAR(r.low, d[c], 1e-9 * d[c]) << n;
    EXPECT_NEAR(r.high, d[d.size() - 1 - c], 1e-9 * d[c]) << n;
    double median =
        d.size() % 2 ? d[d.size() / 2] : std::sqrt(d[d.size() / 2 - 1] * d[d.size() / 2]);
    EXPECT_NEAR(r.ratio, median, 1e-9 * median) << n;
  }
}

TEST(RankInterval, ExcludesOneExactlyWhenTheTestRejects) {
  std::mt19937_64 rng(11);
  int rejected = 0, trials = 0;
  for (size_t n : {6, 20, 45, 200})
    for (double shift : {1.0, 1.03, 1.08, 1.2})
      for (int t = 0; t < 10; ++t) {
        std::vector<double> a = lognormal(rng, n, 1e6, 0.1),
                            b = lognormal(rng, n, 1e6 * shift, 0.1);
        bool rejects = mann_whitney(a, b).p_two_sided < 0.01;
        RatioInterval r = mann_whitney_ratio(a, b, 0.01);
        EXPECT_EQ(rejects, r.low > 1 || r.high < 1) << n << " " << shift;
        EXPECT_LE(r.low, r.ratio);
        EXPECT_GE(r.high, r.ratio);
        rejected += rejects;
        ++trials;
      }
  EXPECT_GT(rejected, 10);
  EXPECT_LT(rejected, trials);
}

TEST(RankInterval, TooFewSamplesGiveAnUnboundedInterval) {
  std::vector<double> a = {10, 11, 12}, b = {30, 31, 32};
  RatioInterval r = mann_whitney_ratio(a, b, 0.01);  // 3 vs 3: p >= 0.05 whatever the values
  EXPECT_EQ(r.low, 0);
  EXPECT_TRUE(std::isinf(r.high));
  EXPECT_NEAR(r.ratio, 31.0 / 11.0, 1e-9);
  EXPECT_EQ(mann_whitney_min_samples(0.01), 5u);  // 1 / C(10, 5) = 1/252
  EXPECT_EQ(mann_whitney_min_samples(0.05), 4u);  // 1 / C(6, 3) = 0.05 is not below 0.05
}

TEST(RankInterval, ZerosAndTies) {
  // An op that did not run in some executions: zero samples tie with each other whatever the
  // factor, and a zero BASE sample against a positive NEW one counts as a larger NEW.
  std::vector<double> a = {0, 0, 100, 101, 102, 103, 104, 105};
  std::vector<double> b = {0, 150, 151, 152, 153, 154, 155, 156};
  RatioInterval r = mann_whitney_ratio(a, b, 0.01);
  EXPECT_GT(r.ratio, 1.4);
  EXPECT_LT(r.ratio, 1.6);
  std::vector<double> same = {5, 5, 5, 5, 5, 5};
  RatioInterval s = mann_whitney_ratio(same, same, 0.01);
  EXPECT_NEAR(s.ratio, 1, 1e-12);
  EXPECT_LT(s.low, 1.0 + 1e-9);
  EXPECT_GT(s.high, 1.0 - 1e-9);
  EXPECT_TRUE(std::isnan(mann_whitney_ratio({}, b, 0.01).ratio));
}

TEST(Effect, MoreSamplesDecideWhatTheyPromise) {
  // 8% slower with 10% noise against a 5% budget: 20 runs a side cannot tell; the promised
  // number of extra runs mostly can.
  std::mt19937_64 rng(3);
  int decided = 0, tried = 0, trials = 40;
  for (int t = 0; t < trials; ++t) {
    std::vector<double> a = lognormal(rng, 20, 1e6, 0.1), b = lognormal(rng, 20, 1.08e6, 0.1);
    Effect e = compare_samples(a, {}, b, {}, 1.05, 0.02);
    bool undecided = e.p_greater >= 0.01 && e.p_less >= 0.01;
    if (!undecided) continue;
    std::optional<MoreSamples> more = more_samples_to_decide(e, 1.05, 0.01);
    if (!more || more->per_side > 2000) continue;  // an estimate that sits near the limit
    EXPECT_FALSE(more->at_least);
    ++tried;
    std::vector<double> a2 = lognormal(rng, more->per_side, 1e6, 0.1);
    std::vector<double> b2 = lognormal(rng, more->per_side, 1.08e6, 0.1);
    a.insert(a.end(), a2.begin(), a2.end());
    b.insert(b.end(), b2.begin(), b2.end());
    Effect again = compare_samples(a, {}, b, {}, 1.05, 0.02);
    decided += again.p_greater < 0.01 || again.p_less < 0.01;
  }
  EXPECT_GT(tried, 10);
  EXPECT_GT(decided, tried / 2);

  std::vector<double> few_a = {1, 2, 3}, few_b = {3, 4, 5};
  Effect few = compare_samples(few_a, {}, few_b, {}, 1.05, 0.02);
  std::optional<MoreSamples> m = more_samples_to_decide(few, 1.05, 0.01);
  ASSERT_TRUE(m);
  EXPECT_TRUE(m->at_least);
  EXPECT_EQ(m->per_side, 2u);  // to the 5 per side any verdict at alpha 0.01 needs
}

TEST(Effect, SeveralCapturesUseTheCaptureMedians) {
  // Three captures a side of 10 runs; the interval is the t interval of the geometric means.
  std::vector<double> a, b;
  std::vector<size_t> sizes = {10, 10, 10};
  for (double speed : {100.0, 104.0, 98.0})
    for (int i = 0; i < 10; ++i) a.push_back(speed + i % 3);
  for (double speed : {150.0, 155.0, 149.0})
    for (int i = 0; i < 10; ++i) b.push_back(speed + i % 3);
  Effect e = compare_samples(a, sizes, b, sizes, 1.0, 0.01);
  EXPECT_STREQ(e.test, "capture-t");
  EXPECT_EQ(e.base_n, 3u);
  ASSERT_TRUE(e.ratio);
  EXPECT_NEAR(*e.ratio, std::cbrt(151.0 * 156 * 150) / std::cbrt(101.0 * 105 * 99), 1e-12);
  EXPECT_LT(e.low, *e.ratio);
  EXPECT_GT(e.high, *e.ratio);
  EXPECT_EQ(e.p_two_sided<0.01, e.low> 1);
}

}  // namespace
}  // namespace jaxprof
