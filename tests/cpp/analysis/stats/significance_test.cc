// Rank statistics against values computed by hand and cross-checked with SciPy 1.17
// (scipy.stats.mannwhitneyu(new, base, alternative=..., method=...)).
#include "jaxprof/analysis/stats/significance.h"

#include <gtest/gtest.h>

#include <vector>

namespace jaxprof {
namespace {

TEST(MannWhitney, ExactSeparatedSamples) {
  // Every b exceeds every a: U = 3 * 3 = 9, the largest of C(6,3) = 20 equally likely values.
  std::vector<double> a{1, 2, 3}, b{4, 5, 6};
  MannWhitney r = mann_whitney(a, b);
  EXPECT_TRUE(r.exact);
  EXPECT_DOUBLE_EQ(r.u, 9);
  EXPECT_DOUBLE_EQ(r.p_greater, 1.0 / 20);
  EXPECT_DOUBLE_EQ(r.p_less, 1.0);
  EXPECT_DOUBLE_EQ(r.p_two_sided, 0.1);
  // Swapping the samples mirrors the statistic.
  MannWhitney s = mann_whitney(b, a);
  EXPECT_DOUBLE_EQ(s.u, 0);
  EXPECT_DOUBLE_EQ(s.p_less, 1.0 / 20);
}

TEST(MannWhitney, ExactInterleavedSamples) {
  // b = {2,4,6,8,10} against a = {1,3,5,7}: pairs with b > a are 1+2+3+4+4 = 14 of 20.
  std::vector<double> a{1, 3, 5, 7}, b{2, 4, 6, 8, 10};
  MannWhitney r = mann_whitney(a, b);
  EXPECT_TRUE(r.exact);
  EXPECT_DOUBLE_EQ(r.u, 14);
  EXPECT_NEAR(r.p_greater, 26.0 / 126, 1e-15);  // 26 of the C(9,4) = 126 arrangements
  EXPECT_NEAR(r.p_less, 0.8571428571428572, 1e-12);
  EXPECT_NEAR(r.p_two_sided, 0.4126984126984127, 1e-12);
}

TEST(MannWhitney, TiesUseTheCorrectedNormalApproximation) {
  std::vector<double> a{1, 2, 2, 3, 4}, b{2, 3, 3, 5, 6, 6};
  MannWhitney r = mann_whitney(a, b);
  EXPECT_FALSE(r.exact);
  EXPECT_DOUBLE_EQ(r.u, 24);  // midranks: 2s rank 3, 3s rank 6
  EXPECT_NEAR(r.p_greater, 0.05652498942816145, 1e-12);
  EXPECT_NEAR(r.p_less, 0.9617245753150733, 1e-12);
  EXPECT_NEAR(r.p_two_sided, 0.1130499788563229, 1e-12);
}

TEST(MannWhitney, LargeSamplesWithTies) {
  std::vector<double> a, b;
  for (int k = 0; k < 4; ++k)
    for (double x : {10, 12, 11, 13, 12, 14, 11, 10, 12, 13}) {
      a.push_back(x);
      b.push_back(x + 1.5);
    }
  MannWhitney r = mann_whitney(a, b);
  EXPECT_DOUBLE_EQ(r.u, 1264);
  EXPECT_NEAR(r.p_two_sided, 7.157306367483422e-06, 1e-15);
  EXPECT_NEAR(r.p_greater, 3.578653183741711e-06, 1e-15);
}

TEST(MannWhitney, EqualSamplesAreNoEvidence) {
  std::vector<double> a(30, 5.0), b(30, 5.0);
  MannWhitney r = mann_whitney(a, b);
  EXPECT_DOUBLE_EQ(r.p_two_sided, 1);
  EXPECT_DOUBLE_EQ(mann_whitney({}, b).p_two_sided, 1);
}

TEST(Median, OddEvenAndEmpty) {
  EXPECT_DOUBLE_EQ(median({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(median({4, 1, 3, 2}), 2.5);
  EXPECT_DOUBLE_EQ(median({}), 0);
}

TEST(HodgesLehmann, MedianOfPairwiseDifferences) {
  // Hollander & Wolfe's example data; the 81 differences y - x have median -0.56.
  std::vector<double> x{1.83, 0.50, 1.62, 2.48, 1.68, 1.88, 1.55, 3.06, 1.30};
  std::vector<double> y{0.878, 0.647, 0.598, 2.05, 1.06, 1.29, 1.06, 3.14, 1.29};
  EXPECT_NEAR(hodges_lehmann_shift(x, y), -0.56, 1e-12);
  EXPECT_DOUBLE_EQ(hodges_lehmann_shift(std::vector<double>{1, 2}, std::vector<double>{11, 12}),
                   10);
}

TEST(HodgesLehmann, ExactForLargeSamples) {
  // Every one of the n * m differences, sorted: the count-and-bisect search must give the same
  // median, ties and negative values included.
  SplitMix64 g(5);
  for (size_t n : {1, 2, 7, 300}) {
    std::vector<double> x, y, d;
    for (size_t i = 0; i < n; ++i) x.push_back(static_cast<double>(g.below(50)) - 20.5);
    for (size_t i = 0; i < n + 3; ++i) y.push_back(static_cast<double>(g.below(50)) * 0.3);
    for (double a : x)
      for (double b : y) d.push_back(b - a);
    EXPECT_EQ(hodges_lehmann_shift(x, y), median(d)) << n;
  }
}

TEST(SplitMix64, KnownSequenceAndBounds) {
  // First outputs of splitmix64 seeded with 0 (the reference implementation's sequence).
  SplitMix64 g(0);
  EXPECT_EQ(g.next(), 0xe220a8397b1dcdafULL);
  EXPECT_EQ(g.next(), 0x6e789e6aa1b965f4ULL);
  for (int i = 0; i < 1000; ++i) EXPECT_LT(g.below(7), 7u);
}

}  // namespace
}  // namespace jaxprof
