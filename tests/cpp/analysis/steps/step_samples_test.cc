// Step samples: the marked steps of the project's JAX captures, why marks cannot stand for the
// step, and `check --metric step` / the step row of `diff` on steps with known differences.
#include "jaxprof/analysis/steps/step_samples.h"

#include <gtest/gtest.h>

#include "jaxprof/analysis/stats/diff.h"
#include "jaxprof/analysis/stats/regression.h"
#include "jaxprof/analysis/steps/steps.h"
#include "jaxprof/formats/load.h"
#include "test_paths.h"

namespace jaxprof {
namespace {

TEST(StepSamples, EightDeviceCaptureLeavesTheWarmUpStepOut) {
  LoadedProfile lp;
  load_profile({testing::test_data("jax_cpu_8dev")}, {}, lp);
  StepSamples s = collect_step_samples(lp.profile);
  // 4 steps marked "train" (tests/data/README.md); step 0 compiles global_sse and runs both
  // programs for the first time.
  EXPECT_TRUE(s.usable()) << s.unusable;
  EXPECT_EQ(s.name, "train");
  EXPECT_EQ(s.marked, 4u);
  EXPECT_EQ(s.warmup, 1u);
  EXPECT_EQ(s.captures, (std::vector<size_t>{3}));
  StepsResult steps = compute_steps(lp.profile);
  ASSERT_EQ(s.per_step.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(steps.steps[i + 1].number, static_cast<int64_t>(i + 1));
    EXPECT_DOUBLE_EQ(s.per_step[i], static_cast<double>(steps.steps[i + 1].duration_ps()));
    // The loop waits for the loss: the marks hold their device work.
    EXPECT_LE(steps.steps[i + 1].device_end_ps, steps.steps[i + 1].end_ps);
    EXPECT_GT(steps.steps[i + 1].device_end_ps, steps.steps[i + 1].start_ps);
  }
}

TEST(StepSamples, UnmarkedCaptureIsUnusable) {
  LoadedProfile lp;
  load_profile({testing::test_data("jax_cpu_matmul")}, {}, lp);
  StepSamples s = collect_step_samples(lp.profile);
  EXPECT_EQ(s.unusable, "no step marks");
  EXPECT_EQ(s.marked, 0u);
  EXPECT_TRUE(s.per_step.empty());
  // A default (empty) sample set has no marks either.
  EXPECT_FALSE(StepSamples{}.usable());
}

StepSamples steps(double ps, size_t n = 20, const char* unusable = "") {
  StepSamples s;
  s.name = "train";
  s.unusable = unusable;
  for (size_t i = 0; i < n; ++i) s.per_step.push_back(ps + static_cast<double>(i % 5));
  s.captures = {n};
  s.marked = n + 1;
  s.warmup = 1;
  return s;
}

TEST(StepSamples, PoolingNamesTheCaptureWithoutUsableMarks) {
  StepSamples p = pool_step_samples({steps(100), steps(110, 10), steps(120)});
  EXPECT_TRUE(p.usable());
  EXPECT_EQ(p.captures, (std::vector<size_t>{20, 10, 20}));
  EXPECT_EQ(p.per_step.size(), 50u);
  EXPECT_DOUBLE_EQ(p.per_step[20], 110);
  EXPECT_EQ(p.marked, 53u);
  EXPECT_EQ(p.warmup, 3u);

  StepSamples none = StepSamples{};
  StepSamples one_missing = pool_step_samples({steps(100), none, steps(120)});
  EXPECT_EQ(one_missing.unusable, "no step marks");
  EXPECT_EQ(one_missing.unusable_capture, 2u);
  StepSamples all_missing = pool_step_samples({none, none});
  EXPECT_EQ(all_missing.unusable_capture, 0u);

  StepSamples ok = steps(100);
  EXPECT_EQ(steps_unavailable(ok, ok), "");
  EXPECT_EQ(steps_unavailable(none, none), "no step marks in BASE and NEW");
  EXPECT_EQ(steps_unavailable(ok, none), "no step marks in NEW");
  EXPECT_EQ(steps_unavailable(all_missing, ok), "no step marks in BASE");
  EXPECT_EQ(steps_unavailable(ok, one_missing), "no step marks in NEW capture 2");
  StepSamples async = steps(100, 20, "the step marks end before their device work");
  EXPECT_EQ(steps_unavailable(async, none),
            "the step marks end before their device work in BASE, no step marks in NEW");
}

// A step program that runs in 1 ms whatever the steps around it do.
ProfileSamples side(StepSamples s) {
  ModuleSamples m;
  m.name = "jit_step";
  m.devices = 1;
  for (size_t i = 0; i < 20; ++i) m.per_exec.push_back(1e9 + static_cast<double>(i % 3));
  m.captures = {m.per_exec.size()};
  ProfileSamples p{{m}, {}};
  p.steps = std::move(s);
  return p;
}

TEST(CheckSteps, StepMarksDecideWhenBothSidesHaveThem) {
  // The device program is unchanged, but each step takes 1.5x as long (host work added): the
  // step gate sees it, the module gate cannot.
  ProfileSamples base = side(steps(2e9)), slower = side(steps(3e9));
  CheckResult r = check_regression(base, slower, {});
  EXPECT_EQ(r.verdict, Verdict::kRegression);
  EXPECT_STREQ(r.metric_source, "step-marks");
  EXPECT_STREQ(r.unit, "steps");
  EXPECT_EQ(r.metric, "step (wall time of the train step marks)");
  EXPECT_EQ(r.module, "jit_step");
  EXPECT_TRUE(r.step_fallback.empty());
  EXPECT_EQ(r.base_executions, 20u);
  EXPECT_NEAR(*r.ratio, 1.5, 1e-8);  // the median of the pairwise ratios
  CheckOptions module;
  module.metric = "module:jit_step";
  EXPECT_EQ(check_regression(base, slower, module).verdict, Verdict::kOk);

  // NEW without marks: the module decides, and the result says why.
  ProfileSamples unmarked = side(StepSamples{});
  CheckResult f = check_regression(base, unmarked, {});
  EXPECT_EQ(f.verdict, Verdict::kOk);
  EXPECT_STREQ(f.metric_source, "top-module");
  EXPECT_STREQ(f.unit, "runs");
  EXPECT_EQ(f.step_fallback, "no step marks in NEW");
  EXPECT_EQ(f.metric, "step (module jit_step; no step marks in NEW)");
}

TEST(CheckSteps, DiffHasAStepRowOnlyWithUsableMarks) {
  DiffResult d = compute_diff(side(steps(2e9)), side(steps(3e9)));
  ASSERT_TRUE(d.step);
  EXPECT_EQ(d.step->name, "train");
  EXPECT_EQ(d.step->base_executions, 20u);
  EXPECT_DOUBLE_EQ(d.step->base_mean_ps, 2e9 + 2);
  EXPECT_EQ(d.step->change, Change::kSlower);
  EXPECT_EQ(d.step->contribution_ps, 0);
  // The step is not part of the total: only the unchanged module is.
  EXPECT_NEAR(d.delta_ps, 0, 1e-3);
  DiffResult none = compute_diff(side(steps(2e9)), side(steps(3e9, 20, "no step marks")));
  EXPECT_FALSE(none.step);
  EXPECT_EQ(none.step_unavailable, "no step marks in NEW");
}

}  // namespace
}  // namespace jaxprof
