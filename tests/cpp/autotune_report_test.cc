// Candidate statistics computed by hand: median, mean, unscaled MAD and a bootstrap interval that
// brackets the median and does not change between runs.
#include "jaxprof/analysis/autotune_report.h"

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

}  // namespace
}  // namespace jaxprof
