// A cross-check of the test over capture medians (welch_t_test.h) against a hierarchical
// bootstrap (resample the captures of a side, then the runs within each): both judge the same
// synthetic captures, whose processes differ by a random factor as real ones do. They must agree
// where the answer is clear; at the edge of the budget the bootstrap, which takes five captures'
// spread at face value, raises false alarms several times as often as alpha (here about 4% for
// alpha = 1%, against the t-test's 0.5%), which is why `check` uses the t-test.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "jaxprof/analysis/stats/welch_t_test.h"

namespace jaxprof {
namespace {

using Captures = std::vector<std::vector<double>>;  // runs per capture

// `n` captures of `runs` runs: a process speed factor exp(N(0, proc)) times per-run jitter
// exp(N(0, run)), around `center`.
Captures make_side(std::mt19937_64& rng, double center, size_t n, size_t runs, double proc,
                   double run) {
  std::normal_distribution<double> p(0, proc), r(0, run);
  Captures out(n);
  for (auto& c : out) {
    double speed = center * std::exp(p(rng));
    for (size_t i = 0; i < runs; ++i) c.push_back(speed * std::exp(r(rng)));
  }
  return out;
}

double median_of(std::vector<double> v) {
  size_t k = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
  double hi = v[k];
  if (v.size() % 2) return hi;
  return (hi + *std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k))) / 2;
}

std::vector<double> medians(const Captures& side) {
  std::vector<double> out;
  for (const auto& c : side) out.push_back(median_of(c));
  return out;
}

// One resample of a side: captures drawn with replacement, then runs within each; the mean log
// median of the result.
double resample_log_center(std::mt19937_64& rng, const Captures& side) {
  std::uniform_int_distribution<size_t> pick_capture(0, side.size() - 1);
  double sum = 0;
  std::vector<double> runs;
  for (size_t i = 0; i < side.size(); ++i) {
    const auto& c = side[pick_capture(rng)];
    std::uniform_int_distribution<size_t> pick_run(0, c.size() - 1);
    runs.clear();
    for (size_t k = 0; k < c.size(); ++k) runs.push_back(c[pick_run(rng)]);
    sum += std::log(median_of(runs));
  }
  return sum / static_cast<double>(side.size());
}

// One-sided bootstrap p-value of NEW > BASE * scale: the share of resampled log ratios at or
// below log(scale).
double bootstrap_p_greater(std::mt19937_64& rng, const Captures& base, const Captures& now,
                           double scale, size_t resamples = 400) {
  size_t below = 0;
  for (size_t b = 0; b < resamples; ++b)
    if (resample_log_center(rng, now) - resample_log_center(rng, base) <= std::log(scale)) ++below;
  return static_cast<double>(below) / static_cast<double>(resamples);
}

struct Verdicts {
  size_t t = 0, bootstrap = 0, both = 0, trials = 0;
};

// How often each test calls NEW slower than BASE by more than `budget` at `alpha`, NEW being
// `true_ratio` times slower.
Verdicts judge(uint64_t seed, double true_ratio, size_t trials, double budget = 0.05,
               double alpha = 0.01) {
  std::mt19937_64 rng(seed);
  Verdicts v;
  v.trials = trials;
  for (size_t i = 0; i < trials; ++i) {
    // Five processes per side of 20 runs, 15% between processes, 5% between runs (the order of
    // what the project's 2-core machine shows).
    Captures base = make_side(rng, 1e9, 5, 20, 0.15, 0.05);
    Captures now = make_side(rng, 1e9 * true_ratio, 5, 20, 0.15, 0.05);
    double limit = 1 + budget;
    CaptureTest t = capture_t_test(medians(base), medians(now), limit);
    bool by_t = t.ratio > limit && t.p_greater < alpha;
    bool by_boot = bootstrap_p_greater(rng, base, now, limit) < alpha;
    v.t += by_t;
    v.bootstrap += by_boot;
    v.both += by_t && by_boot;
  }
  return v;
}

TEST(CaptureBootstrap, AgreesOnAClearSlowdownAndOnNoChange) {
  Verdicts slow = judge(1, 2.5, 50);
  EXPECT_GE(slow.both, 48u) << slow.t << " " << slow.bootstrap;
  Verdicts same = judge(2, 1.0, 50);
  EXPECT_LE(same.t, 1u);
  EXPECT_LE(same.bootstrap, 2u);
}

TEST(CaptureBootstrap, AtTheBudgetOnlyTheTTestKeepsItsFalseAlarmRate) {
  // NEW exactly at the budget: a regression may be called in about alpha = 1% of trials.
  Verdicts edge = judge(3, 1.05, 600);
  // Binomial(600, 0.01) exceeds 14 with probability below 3e-3.
  EXPECT_LE(edge.t, 14u);
  // Five captures' spread taken at face value: the bootstrap's intervals are too narrow.
  EXPECT_GT(edge.bootstrap, 2 * std::max<size_t>(edge.t, 4)) << edge.t;
  ::testing::Test::RecordProperty("t_alarms", static_cast<int>(edge.t));
  ::testing::Test::RecordProperty("bootstrap_alarms", static_cast<int>(edge.bootstrap));
}

}  // namespace
}  // namespace jaxprof
