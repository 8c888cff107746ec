// Candidate statistics computed by hand: median, mean, unscaled MAD and a bootstrap interval that
// brackets the median and does not change between runs.
#include "jaxprof/analysis/autotune/autotune_report.h"

#include <gtest/gtest.h>

namespace jaxprof {
namespace {

TEST(AutotuneReport, CandidateStatistics) {
  CandidateTiming c;
  c.id = "3";
  c.samples_ps = {10, 12, 11, 50, 13};
  summarise_candidate(c, 500, kAutotuneBootstrapSeed);
  EXPECT_DOUBLE_EQ(c.median_ps, 12);
  EXPECT_DOUBLE_EQ(c.mean_ps, 19.2);
  EXPECT_DOUBLE_EQ(c.mad_ps, 1);  // |deviations| = 2,0,1,38,1 -> median 1: the outlier is ignored
  EXPECT_LE(c.ci_low_ps, c.median_ps);
  EXPECT_GE(c.ci_high_ps, c.median_ps);
  EXPECT_GE(c.ci_low_ps, 10);
  EXPECT_LE(c.ci_high_ps, 50);
  CandidateTiming d = c;
  summarise_candidate(d, 500, kAutotuneBootstrapSeed);
  EXPECT_EQ(d.ci_low_ps, c.ci_low_ps);
  EXPECT_EQ(d.ci_high_ps, c.ci_high_ps);
}

TEST(AutotuneReport, OneSampleHasAPointInterval) {
  CandidateTiming c;
  c.samples_ps = {7};
  summarise_candidate(c, 100, 1);
  EXPECT_EQ(c.ci_low_ps, 7);
  EXPECT_EQ(c.ci_high_ps, 7);
  EXPECT_EQ(c.mad_ps, 0);
}

TEST(AutotuneReport, RankCandidatesOrdersAndJudges) {
  // Samples gathered outside a profile: the fastest median wins; with every winner sample
  // below every runner-up sample and 6 + 6 tie-free samples, the exact one-sided Mann-Whitney
  // p is 1 / C(12, 6) = 1/924.
  auto candidate = [](std::string id, std::vector<int64_t> samples) {
    CandidateTiming c;
    c.id = std::move(id);
    c.samples_ps = std::move(samples);
    return c;
  };
  CandidateTiming slow = candidate("0", {30, 31, 29, 32, 34, 33});
  CandidateTiming fast = candidate("1", {20, 21, 19, 22, 24, 23});
  CandidateTiming none = candidate("2", {});
  AutotuneReportOptions o;
  o.resamples = 200;
  AutotuneReport r = rank_candidates({slow, fast, none}, o, "wall clock");
  EXPECT_EQ(r.source, "wall clock");
  ASSERT_EQ(r.candidates.size(), 3u);
  EXPECT_EQ(r.candidates[0].id, "1");
  EXPECT_EQ(r.candidates[1].id, "0");
  EXPECT_EQ(r.candidates[2].id, "2");  // sample-less candidates are kept, last
  EXPECT_EQ(r.winner, 0);
  EXPECT_EQ(r.runner_up, 1);
  EXPECT_DOUBLE_EQ(r.candidates[0].median_ps, 21.5);
  EXPECT_DOUBLE_EQ(r.speedup, 31.5 / 21.5);
  EXPECT_TRUE(r.ci_disjoint);
  EXPECT_NEAR(r.p_value, 1.0 / 924, 1e-12);
  EXPECT_TRUE(r.significant);
  ASSERT_EQ(r.warnings.size(), 1u);  // candidate 2 has no samples
}

}  // namespace
}  // namespace jaxprof
