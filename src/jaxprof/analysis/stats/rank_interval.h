// The estimate and interval that go with the Mann-Whitney test, so that what is shown is what was
// tested: the Hodges-Lehmann ratio (the median of the pairwise ratios NEW/BASE) and the interval
// of scale factors r for which the test of NEW against r x BASE does not reject. The interval is
// the test inverted: it excludes a factor exactly when the test at that factor gives p < alpha
// (up to samples that tie at the factor), and a rank test needs no assumption about the shape of
// the timing distribution.
#pragma once

#include <cstddef>
#include <span>

namespace jaxprof {

struct RatioInterval {
  // Median of the pairwise ratios b_j / a_i (a pair of zeros ties; a zero BASE sample against a
  // positive NEW one counts as an infinite ratio). NaN when there are no samples.
  double ratio = 0;
  // The factors the two-sided test at level alpha does not reject: 0 and +inf where the samples
  // are too few for it to reject any factor on that side.
  double low = 0, high = 0;
};

// Sample sizes and values are as for mann_whitney (significance.h); values must be >= 0.
RatioInterval mann_whitney_ratio(std::span<const double> a, std::span<const double> b,
                                 double alpha);

// The fewest samples per side with which the one-sided Mann-Whitney test can give p < alpha at
// all (the exact distribution, no ties): 1 / C(2n, n) < alpha.
size_t mann_whitney_min_samples(double alpha);

}  // namespace jaxprof
