// "Is this change beyond noise": rank statistics over per-execution samples, which need no
// assumption about the shape of the timing distribution (CPU and GPU timings are skewed and have
// outliers), and a small seeded generator so that resampling gives the same answer every time.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace jaxprof {

struct MannWhitney {
  double u = 0;          // U of `b`: pairs with b > a, ties counting one half
  double z = 0;          // normal approximation (tie- and continuity-corrected); 0 when exact
  double p_greater = 1;  // one-sided: b tends to be larger than a
  double p_less = 1;     // one-sided: b tends to be smaller than a
  double p_two_sided = 1;
  bool exact = false;  // p from the exact distribution of U (small samples without ties)
  double u_sd = 0;     // standard deviation of U under the null, tie-corrected (normal case)
};

// Whether mann_whitney takes p from the exact distribution of U: no ties, at most 60 samples.
inline bool mann_whitney_is_exact(size_t n, size_t m, bool ties) { return !ties && n + m <= 60; }

// The exact null distribution of U for samples of sizes n and m without ties: how many of the
// C(n + m, n) arrangements give each U = 0 .. n * m.
std::vector<double> mann_whitney_u_counts(size_t n, size_t m);

// Mann-Whitney U test of `b` against `a`. Empty samples give p = 1.
MannWhitney mann_whitney(std::span<const double> a, std::span<const double> b);

double median(std::vector<double> v);  // 0 for an empty sample

// Hodges-Lehmann estimate of the shift b - a: the median of all pairwise differences.
double hodges_lehmann_shift(std::span<const double> a, std::span<const double> b);

// A small deterministic generator (splitmix64): bootstrap results must not depend on the
// standard library's distributions, which differ between implementations.
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t next();
  size_t below(size_t n);  // uniform in [0, n), n > 0

 private:
  uint64_t state_;
};

}  // namespace jaxprof
