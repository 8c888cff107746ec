#include "jaxprof/analysis/stats/welch_t_test.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "jaxprof/analysis/stats/significance.h"

namespace jaxprof {

namespace {

// Continued fraction of the incomplete beta function (modified Lentz), good for
// x < (a + 1) / (a + b + 2).
double beta_fraction(double a, double b, double x) {
  constexpr double kTiny = 1e-300, kEps = 1e-15;
  double c = 1, d = 1 - (a + b) * x / (a + 1);
  if (std::fabs(d) < kTiny) d = kTiny;
  d = 1 / d;
  double f = d;
  for (int m = 1; m <= 500; ++m) {
    double dm = m;
    // Even step, then odd step, of the fraction's terms.
    double num = dm * (b - dm) * x / ((a + 2 * dm - 1) * (a + 2 * dm));
    d = 1 + num * d;
    c = 1 + num / c;
    if (std::fabs(d) < kTiny) d = kTiny;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1 / d;
    f *= d * c;
    num = -(a + dm) * (a + b + dm) * x / ((a + 2 * dm) * (a + 2 * dm + 1));
    d = 1 + num * d;
    c = 1 + num / c;
    if (std::fabs(d) < kTiny) d = kTiny;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1 / d;
    double step = d * c;
    f *= step;
    if (std::fabs(step - 1) < kEps) break;
  }
  return f;
}

// Regularized incomplete beta I_x(a, b).
double incomplete_beta(double a, double b, double x) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  double log_front =
      std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x);
  if (x < (a + 1) / (a + b + 2)) return std::exp(log_front) * beta_fraction(a, b, x) / a;
  return 1 - std::exp(log_front) * beta_fraction(b, a, 1 - x) / b;
}

double mean(std::span<const double> v) {
  double s = 0;
  for (double x : v) s += x;
  return s / static_cast<double>(v.size());
}

double sample_variance(std::span<const double> v, double m) {
  if (v.size() < 2) return 0;
  double s = 0;
  for (double x : v) s += (x - m) * (x - m);
  return s / static_cast<double>(v.size() - 1);
}

}  // namespace

double student_t_upper(double t, double df) {
  if (std::isinf(t)) return t > 0 ? 0 : 1;
  double tail = 0.5 * incomplete_beta(df / 2, 0.5, df / (df + t * t));
  return t > 0 ? tail : 1 - tail;
}

double student_t_quantile_upper(double p, double df) {
  if (p == 0.5) return 0;
  if (p > 0.5) return -student_t_quantile_upper(1 - p, df);
  double lo = 0, hi = 1;
  while (student_t_upper(hi, df) > p && hi < 1e12) hi *= 2;
  for (int i = 0; i < 200 && hi - lo > 1e-12 * hi; ++i) {
    double mid = (lo + hi) / 2;
    (student_t_upper(mid, df) > p ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

double welch_df(double var_base, double n_base, double var_new, double n_new) {
  if (n_base <= 1) return n_new - 1;
  if (n_new <= 1) return n_base - 1;
  double sa = var_base / n_base, sb = var_new / n_new;
  if (sa + sb <= 0) return n_base + n_new - 2;
  return (sa + sb) * (sa + sb) / (sa * sa / (n_base - 1) + sb * sb / (n_new - 1));
}

CaptureTest capture_t_test(std::span<const double> base, std::span<const double> now, double scale,
                           double tail) {
  CaptureTest r;
  r.base_captures = base.size();
  r.new_captures = now.size();
  if (base.empty() || now.empty() || base.size() + now.size() < 3) return r;
  r.tested = true;
  r.log_scale = std::all_of(base.begin(), base.end(), [](double x) { return x > 0; }) &&
                std::all_of(now.begin(), now.end(), [](double x) { return x > 0; }) && scale > 0;
  std::vector<double> a(base.begin(), base.end()), b(now.begin(), now.end());
  double weight = 1;  // of BASE's variance
  if (r.log_scale) {
    for (double& x : a) x = std::log(x);
    for (double& x : b) x = std::log(x);
  } else {
    weight = scale * scale;
  }
  double ma = mean(a), mb = mean(b);
  double va = sample_variance(a, ma), vb = sample_variance(b, mb);
  double na = static_cast<double>(a.size()), nb = static_cast<double>(b.size());
  if (a.size() == 1)
    va = vb;  // the same spread on both sides
  else if (b.size() == 1)
    vb = va;
  double sa = weight * va / na, sb = vb / nb;
  r.var_base = weight * va;
  r.var_new = vb;
  r.se = std::sqrt(sa + sb);
  r.df = welch_df(r.var_base, na, r.var_new, nb);
  double diff = r.log_scale ? mb - ma : mb - scale * ma;  // before the budget
  r.estimate = r.log_scale ? diff - std::log(scale) : diff;
  if (r.se > 0) {
    r.t = r.estimate / r.se;
    r.p_greater = student_t_upper(r.t, r.df);
    r.p_less = student_t_upper(-r.t, r.df);
  } else {
    // Every capture of each side took the same time: the sign decides.
    r.t = r.estimate > 0   ? std::numeric_limits<double>::infinity()
          : r.estimate < 0 ? -std::numeric_limits<double>::infinity()
                           : 0;
    r.p_greater = r.estimate > 0 ? 0 : 1;
    r.p_less = r.estimate < 0 ? 0 : 1;
  }
  r.p_two_sided = std::min(1.0, 2 * std::min(r.p_greater, r.p_less));
  if (r.log_scale) {
    r.ratio = std::exp(diff);
    double q = r.se > 0 ? student_t_quantile_upper(tail, r.df) : 0;
    r.ratio_low = std::exp(diff - q * r.se);
    r.ratio_high = std::exp(diff + q * r.se);
  }
  return r;
}

std::vector<double> capture_medians(std::span<const double> samples,
                                    std::span<const size_t> sizes) {
  std::vector<double> out;
  size_t at = 0;
  for (size_t n : sizes) {
    if (n > 0 && at + n <= samples.size())
      out.push_back(
          median(std::vector<double>(samples.begin() + static_cast<std::ptrdiff_t>(at),
                                     samples.begin() + static_cast<std::ptrdiff_t>(at + n))));
    at += n;
  }
  return out;
}

}  // namespace jaxprof
