#include "jaxprof/analysis/stats/rank_interval.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "jaxprof/analysis/stats/significance.h"

namespace jaxprof {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

double normal_upper_tail(double z) { return 0.5 * std::erfc(z / std::sqrt(2.0)); }

// U(r) = #{(i, j): b_j > r a_i} + 1/2 #{(i, j): b_j = r a_i} for a and b sorted ascending: the U
// of the test of b against r x a, in one pass over both.
double u_at(const std::vector<double>& a, const std::vector<double>& b, double r) {
  size_t below = 0, upto = 0;
  double u = 0;
  for (double y : b) {
    while (below < a.size() && r * a[below] < y) ++below;
    upto = std::max(upto, below);
    while (upto < a.size() && r * a[upto] <= y) ++upto;
    u += static_cast<double>(below) + 0.5 * static_cast<double>(upto - below);
  }
  return u;
}

// When the two-sided test at alpha rejects a U as too large (NEW larger than r x BASE) or too
// small, with the distribution mann_whitney used for the samples as given (r = 1): exact, or
// normal with its tie-corrected variance and continuity correction.
class Rejection {
 public:
  Rejection(std::span<const double> a, std::span<const double> b, double alpha)
      : half_alpha_(alpha / 2) {
    MannWhitney t = mann_whitney(a, b);
    size_t n = a.size(), m = b.size();
    mean_ = static_cast<double>(n) * static_cast<double>(m) / 2;
    exact_ = t.exact;
    if (exact_) {
      std::vector<double> f = mann_whitney_u_counts(n, m);
      double total = 0;
      for (double x : f) total += x;
      at_most_.resize(f.size());
      at_least_.resize(f.size());
      double run = 0;
      for (size_t k = 0; k < f.size(); ++k) at_most_[k] = (run += f[k]) / total;
      run = 0;
      for (size_t k = f.size(); k-- > 0;) at_least_[k] = (run += f[k]) / total;
    } else {
      sd_ = t.u_sd;
      if (sd_ <= 0)  // every value equal: the spread of U without ties
        sd_ = std::sqrt(mean_ * static_cast<double>(n + m + 1) / 6);
    }
  }

  bool too_large(double u) const {
    if (exact_) {
      auto k = static_cast<size_t>(std::ceil(u));
      return k < at_least_.size() && at_least_[k] < half_alpha_;
    }
    return normal_upper_tail((u - mean_ - 0.5) / sd_) < half_alpha_;
  }
  bool too_small(double u) const {
    if (exact_) {
      auto k = static_cast<size_t>(std::floor(u));
      return at_most_[std::min(k, at_most_.size() - 1)] < half_alpha_;
    }
    return normal_upper_tail((mean_ - u - 0.5) / sd_) < half_alpha_;
  }

 private:
  double half_alpha_;
  double mean_ = 0, sd_ = 0;
  bool exact_ = false;
  std::vector<double> at_most_, at_least_;  // P(U <= k), P(U >= k)
};

// The factor r at which holds(U(r)), true for small r, turns false (U(r) does not grow with r),
// by bisection on log r over [lo, hi], outside which U is constant: 0 when it is false already
// at lo, +inf when it still holds at hi.
template <class Holds>
double transition(const std::vector<double>& a, const std::vector<double>& b, double lo, double hi,
                  Holds holds) {
  if (!holds(u_at(a, b, lo))) return 0;
  if (holds(u_at(a, b, hi))) return kInf;
  double x = std::log(lo), y = std::log(hi);
  for (int i = 0; i < 200 && y - x > 1e-13 * std::max(1.0, std::fabs(x)); ++i) {
    double mid = 0.5 * (x + y);
    (holds(u_at(a, b, std::exp(mid))) ? x : y) = mid;
  }
  return std::exp(0.5 * (x + y));
}

}  // namespace

RatioInterval mann_whitney_ratio(std::span<const double> a, std::span<const double> b,
                                 double alpha) {
  RatioInterval r{std::numeric_limits<double>::quiet_NaN(), 0, kInf};
  if (a.empty() || b.empty()) return r;
  std::vector<double> x(a.begin(), a.end()), y(b.begin(), b.end());
  std::sort(x.begin(), x.end());
  std::sort(y.begin(), y.end());
  // Every pairwise ratio of positive values lies in [lo, hi]; pairs with a zero do not depend
  // on the factor.
  auto first_positive = [](const std::vector<double>& v) {
    auto it = std::upper_bound(v.begin(), v.end(), 0.0);
    return it == v.end() ? 0.0 : *it;
  };
  double lo = 1, hi = 1;
  if (first_positive(x) > 0 && first_positive(y) > 0) {
    lo = first_positive(y) / x.back() / 2;
    hi = y.back() / first_positive(x) * 2;
  }
  double half = static_cast<double>(x.size()) * static_cast<double>(y.size()) / 2;
  double upper = transition(x, y, lo, hi, [&](double u) { return u >= half; });
  double lower = transition(x, y, lo, hi, [&](double u) { return u > half; });
  r.ratio = std::sqrt(lower * upper);
  Rejection test(a, b, alpha);
  r.low = transition(x, y, lo, hi, [&](double u) { return test.too_large(u); });
  r.high = transition(x, y, lo, hi, [&](double u) { return !test.too_small(u); });
  return r;
}

size_t mann_whitney_min_samples(double alpha) {
  double arrangements = 1;  // C(2n, n)
  for (size_t n = 1; n < 64; ++n) {
    arrangements = arrangements * static_cast<double>(2 * n) * static_cast<double>(2 * n - 1) /
                   (static_cast<double>(n) * static_cast<double>(n));
    if (1 / arrangements < alpha) return n;
  }
  return 64;
}

}  // namespace jaxprof
