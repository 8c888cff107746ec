#include "jaxprof/analysis/stats/significance.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <numeric>

namespace jaxprof {

namespace {

double normal_upper_tail(double z) { return 0.5 * std::erfc(z / std::sqrt(2.0)); }

}  // namespace

// From f(n, m, u) = f(n-1, m, u-m) + f(n, m-1, u).
std::vector<double> mann_whitney_u_counts(size_t n, size_t m) {
  size_t max_u = n * m;
  // table[j][u] for the current i (first sample size), j = 0..m
  std::vector<std::vector<double>> prev(m + 1), cur(m + 1);
  for (size_t j = 0; j <= m; ++j) prev[j].assign(max_u + 1, 0), prev[j][0] = 1;  // i = 0
  for (size_t i = 1; i <= n; ++i) {
    cur[0].assign(max_u + 1, 0);
    cur[0][0] = 1;
    for (size_t j = 1; j <= m; ++j) {
      cur[j].assign(max_u + 1, 0);
      for (size_t u = 0; u <= i * j; ++u) {
        double v = cur[j - 1][u];
        if (u >= j) v += prev[j][u - j];
        cur[j][u] = v;
      }
    }
    std::swap(prev, cur);
  }
  return prev[m];
}

MannWhitney mann_whitney(std::span<const double> a, std::span<const double> b) {
  MannWhitney r;
  size_t n = a.size(), m = b.size();
  if (n == 0 || m == 0) return r;
  // Midranks of the pooled sample.
  std::vector<std::pair<double, int>> pooled;
  pooled.reserve(n + m);
  for (double x : a) pooled.push_back({x, 0});
  for (double x : b) pooled.push_back({x, 1});
  std::sort(pooled.begin(), pooled.end());
  double rank_sum_b = 0, tie_term = 0;
  bool ties = false;
  for (size_t i = 0; i < pooled.size();) {
    size_t j = i;
    while (j < pooled.size() && pooled[j].first == pooled[i].first) ++j;
    double t = static_cast<double>(j - i);
    double midrank = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2.0;
    for (size_t k = i; k < j; ++k)
      if (pooled[k].second == 1) rank_sum_b += midrank;
    if (t > 1) {
      ties = true;
      tie_term += t * t * t - t;
    }
    i = j;
  }
  double dn = static_cast<double>(n), dm = static_cast<double>(m);
  r.u = rank_sum_b - dm * (dm + 1) / 2.0;
  double mean_u = dn * dm / 2.0;

  if (mann_whitney_is_exact(n, m, ties)) {
    std::vector<double> f = mann_whitney_u_counts(n, m);
    double total = std::accumulate(f.begin(), f.end(), 0.0);
    auto u = static_cast<size_t>(std::llround(r.u));
    double upper = 0, lower = 0;  // P(U >= u), P(U <= u)
    for (size_t k = 0; k < f.size(); ++k) {
      if (k >= u) upper += f[k];
      if (k <= u) lower += f[k];
    }
    r.exact = true;
    r.p_greater = upper / total;
    r.p_less = lower / total;
    r.p_two_sided = std::min(1.0, 2.0 * std::min(r.p_greater, r.p_less));
    return r;
  }

  double n_all = dn + dm;
  double var = dn * dm / 12.0 * ((n_all + 1) - tie_term / (n_all * (n_all - 1)));
  if (var <= 0) return r;  // every value equal: no evidence either way
  double sd = std::sqrt(var);
  r.u_sd = sd;
  double d = r.u - mean_u;
  r.z = d / sd;
  // Continuity correction of 0.5 towards the mean.
  r.p_greater = normal_upper_tail((d - 0.5) / sd);
  r.p_less = normal_upper_tail((-d - 0.5) / sd);
  r.p_two_sided = std::min(1.0, 2.0 * normal_upper_tail((std::fabs(d) - 0.5) / sd));
  r.p_greater = std::min(1.0, r.p_greater);
  r.p_less = std::min(1.0, r.p_less);
  return r;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid), v.end());
  double hi = v[mid];
  if (v.size() % 2) return hi;
  double lo = *std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid));
  return lo + (hi - lo) / 2.0;
}

namespace {

// Doubles as unsigned integers in the same order, so that bisection can walk every double.
uint64_t order_key(double d) {
  uint64_t u = std::bit_cast<uint64_t>(d);
  return u & (1ULL << 63) ? ~u : u | (1ULL << 63);
}
double from_order_key(uint64_t k) {
  return std::bit_cast<double>(k & (1ULL << 63) ? k & ~(1ULL << 63) : ~k);
}

// The k-th smallest (1-based) of the differences y_j - x_i, for x and y sorted: the smallest
// double t with #{y_j - x_i <= t} >= k, by bisection over doubles with a two-pointer count. The
// count compares the differences as computed, so the result is one of them, exactly.
double kth_difference(const std::vector<double>& x, const std::vector<double>& y, size_t k) {
  auto at_most = [&](double t) {
    size_t count = 0, i = 0;  // y_j - x_i falls as i grows and rises with j
    for (double yj : y) {
      while (i < x.size() && yj - x[i] > t) ++i;
      count += x.size() - i;
    }
    return count;
  };
  uint64_t lo = order_key(y.front() - x.back()), hi = order_key(y.back() - x.front());
  while (lo < hi) {
    uint64_t mid = lo + (hi - lo) / 2;
    if (at_most(from_order_key(mid)) >= k)
      hi = mid;
    else
      lo = mid + 1;
  }
  return from_order_key(lo);
}

}  // namespace

double hodges_lehmann_shift(std::span<const double> a, std::span<const double> b) {
  if (a.empty() || b.empty()) return 0;
  // O((n + m) log) instead of forming all n * m differences: a diff compares thousands of runs.
  std::vector<double> x(a.begin(), a.end()), y(b.begin(), b.end());
  std::sort(x.begin(), x.end());
  std::sort(y.begin(), y.end());
  size_t pairs = x.size() * y.size();
  double hi = kth_difference(x, y, pairs / 2 + 1);
  if (pairs % 2) return hi;
  double lo = kth_difference(x, y, pairs / 2);
  return lo + (hi - lo) / 2;
}

uint64_t SplitMix64::next() {
  uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

size_t SplitMix64::below(size_t n) {
  // Rejection sampling keeps the draw exactly uniform.
  uint64_t limit = UINT64_MAX - UINT64_MAX % n;
  uint64_t x;
  do x = next();
  while (x >= limit);
  return static_cast<size_t>(x % n);
}

}  // namespace jaxprof
