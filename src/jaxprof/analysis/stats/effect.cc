#include "jaxprof/analysis/stats/effect.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string_view>
#include <vector>

#include "jaxprof/analysis/stats/welch_t_test.h"
#include "jaxprof/analysis/stats/rank_interval.h"
#include "jaxprof/analysis/stats/significance.h"

namespace jaxprof {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr size_t kMostSamples = 1'000'000;
// The probability that the planned samples decide, if the change is what it is estimated to
// be now: the usual 80% power of sample-size planning.
constexpr double kPower = 0.8;

// The z with P(Z > z) = p for a standard normal Z, 0 < p < 1.
double normal_quantile_upper(double p) {
  double lo = -40, hi = 40;
  for (int i = 0; i < 200; ++i) {
    double mid = (lo + hi) / 2;
    (0.5 * std::erfc(mid / std::sqrt(2.0)) > p ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

size_t with_executions(std::span<const size_t> captures) {
  return static_cast<size_t>(
      std::count_if(captures.begin(), captures.end(), [](size_t n) { return n > 0; }));
}

double mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? 0 : s / static_cast<double>(v.size());
}

// The smallest k in [1, kMostSamples] for which decided(k) holds, given that decided does not
// turn false again as k grows; none when it does not hold at kMostSamples.
template <class Decided>
std::optional<size_t> fewest(Decided decided) {
  if (!decided(kMostSamples)) return std::nullopt;
  size_t lo = 0, hi = kMostSamples;  // decided(hi), !decided(lo) or lo = 0
  while (hi - lo > 1) {
    size_t mid = lo + (hi - lo) / 2;
    (decided(mid) ? hi : lo) = mid;
  }
  return hi;
}

void capture_test(Effect& e, std::span<const double> base, std::span<const size_t> bc,
                  std::span<const double> now, std::span<const size_t> nc, double factor,
                  double interval_alpha) {
  e.test = "capture-t";
  std::vector<double> ma = capture_medians(base, bc), mb = capture_medians(now, nc);
  e.base_n = ma.size();
  e.new_n = mb.size();
  CaptureTest t = capture_t_test(ma, mb, factor, interval_alpha / 2);
  e.log_scale = t.log_scale;
  e.low = 0;
  e.high = kInf;
  if (!t.tested) return;
  e.p_greater = t.p_greater;
  e.p_less = t.p_less;
  e.p_two_sided = t.p_two_sided;
  e.estimate = t.estimate;
  e.var_base = t.var_base;
  e.var_new = t.var_new;
  if (t.log_scale) {
    e.ratio = t.ratio;
    e.low = t.ratio_low;
    e.high = t.ratio_high;
    return;
  }
  // Some capture's median is 0 (an op that mostly did not run): the means of the medians, and
  // an interval that takes BASE's mean as known.
  double sa = mean(ma), sb = mean(mb);
  if (sa <= 0) {
    if (sb > 0) e.ratio = kInf;
    return;
  }
  double q = t.se > 0 ? student_t_quantile_upper(interval_alpha / 2, t.df) : 0;
  e.ratio = sb / sa;
  e.low = std::max(0.0, (sb - q * t.se) / sa);
  e.high = (sb + q * t.se) / sa;
}

}  // namespace

Effect compare_samples(std::span<const double> base, std::span<const size_t> base_captures,
                       std::span<const double> now, std::span<const size_t> new_captures,
                       double factor, double interval_alpha) {
  Effect e;
  // No layout: one capture.
  size_t whole_base[] = {base.size()}, whole_now[] = {now.size()};
  std::span<const size_t> bc = base_captures.empty() ? whole_base : base_captures;
  std::span<const size_t> nc = new_captures.empty() ? whole_now : new_captures;
  if (std::max<size_t>(1, with_executions(bc)) + std::max<size_t>(1, with_executions(nc)) > 2) {
    capture_test(e, base, bc, now, nc, factor, interval_alpha);
    return e;
  }
  e.base_n = base.size();
  e.new_n = now.size();
  std::vector<double> scaled(base.begin(), base.end());
  for (double& x : scaled) x *= factor;
  MannWhitney t = mann_whitney(scaled, now);
  e.p_greater = t.p_greater;
  e.p_less = t.p_less;
  e.p_two_sided = t.p_two_sided;
  RatioInterval ri = mann_whitney_ratio(base, now, interval_alpha);
  if (!std::isnan(ri.ratio)) e.ratio = ri.ratio;
  e.low = ri.low;
  e.high = ri.high;
  return e;
}

std::optional<MoreSamples> more_samples_to_decide(const Effect& e, double limit, double alpha) {
  if (!e.ratio || !std::isfinite(*e.ratio) || *e.ratio <= 0 || *e.ratio == limit)
    return std::nullopt;
  bool above = *e.ratio > limit;
  if (above ? e.low > limit : e.high < limit) return MoreSamples{};  // decided already
  double nb = static_cast<double>(e.base_n), nn = static_cast<double>(e.new_n);
  if (std::string_view(e.test) == "capture-t") {
    double distance = std::fabs(e.estimate);
    if (distance == 0 || e.base_n == 0 || e.new_n == 0) return std::nullopt;
    auto decided = [&](size_t k) {
      double kb = nb + static_cast<double>(k), kn = nn + static_cast<double>(k);
      double se = std::sqrt(e.var_base / kb + e.var_new / kn);
      double df = welch_df(e.var_base, kb, e.var_new, kn);
      return (student_t_quantile_upper(alpha, df) + student_t_quantile_upper(1 - kPower, df)) * se <
             distance;
    };
    std::optional<size_t> k = fewest(decided);
    if (!k) return std::nullopt;
    return MoreSamples{*k, false};
  }
  size_t have = std::min(e.base_n, e.new_n);
  if (above ? e.low == 0 : std::isinf(e.high)) {
    // The runs are too few for the rank test to reject anything on that side.
    size_t need = mann_whitney_min_samples(alpha);
    return MoreSamples{need > have ? need - have : 1, true};
  }
  // The interval's half-width on the log scale shrinks as sqrt(1/n_base + 1/n_new); it is
  // z(alpha) standard errors, and deciding with probability kPower takes z(alpha) + z(kPower).
  double width = above ? std::log(*e.ratio / e.low) : std::log(e.high / *e.ratio);
  width *= 1 + normal_quantile_upper(1 - kPower) / normal_quantile_upper(alpha);
  double distance = std::fabs(std::log(*e.ratio / limit));
  double now_spread = 1 / nb + 1 / nn;
  auto decided = [&](size_t k) {
    double kb = nb + static_cast<double>(k), kn = nn + static_cast<double>(k);
    return width * std::sqrt((1 / kb + 1 / kn) / now_spread) < distance;
  };
  std::optional<size_t> k = fewest(decided);
  if (!k) return std::nullopt;
  return MoreSamples{*k, false};
}

}  // namespace jaxprof
