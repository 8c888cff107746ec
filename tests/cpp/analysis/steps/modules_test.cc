// modules on the CPU captures: counts from tests/data/README.md; the total of the matmul runs
// equals the op time plus the idle time inside runs that timeline measures separately.
#include "jaxprof/analysis/steps/modules.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "all_work.h"
#include "jaxprof/formats/load.h"
#include "test_paths.h"

namespace jaxprof {
namespace {

ModulesResult modules_of(const std::string& path, SteadyStateOptions steady = testing::kAllWork) {
  LoadedProfile lp;
  load_profile({path}, {}, lp);
  return compute_modules(lp.profile, {.steady = steady});
}

TEST(Modules, CpuMatmulCompiledBeforeTheCaptureHasNoWarmup) {
  // two_matmuls was compiled and run before the trace began: its first captured run is a run
  // like the others, in the total and the mean by default.
  ModulesResult r = modules_of(testing::test_data("jax_cpu_matmul"), {});
  ASSERT_EQ(r.modules.size(), 1u);
  const ModuleStats& m = r.modules[0];
  EXPECT_EQ(m.name, "jit_two_matmuls");
  EXPECT_EQ(m.program_id, 0u);
  EXPECT_EQ(m.executions, 10u);
  EXPECT_EQ(m.warmup_executions, 0u);
  EXPECT_EQ(m.warmup_total_ps, 0);
  EXPECT_DOUBLE_EQ(m.ops_per_execution, 2.0);
  // 35,143,993,000 ps of ops + 2,266,000 ps of gaps between the two dots of each run.
  const int64_t all_runs = 35143993000 + 2266000;
  EXPECT_EQ(m.total_ps, all_runs);
  EXPECT_NEAR(m.mean_ps, static_cast<double>(all_runs) / 10, 1e-3);
  EXPECT_DOUBLE_EQ(m.share, 1.0);
  ASSERT_EQ(m.varying_ops.size(), 2u);
  EXPECT_EQ(m.varying_ops[0].count, 10u);
}

TEST(Modules, CpuEightDevicesWarmupApart) {
  // global_sse compiles inside the trace (step 0): its first run per device is warm-up, apart
  // from the total and the mean by default, counted with --include-warmup.
  ModulesResult r = modules_of(testing::test_data("jax_cpu_8dev"), {});
  ModulesResult all = modules_of(testing::test_data("jax_cpu_8dev"));
  auto sse = [](const ModulesResult& x) {
    return *std::find_if(x.modules.begin(), x.modules.end(),
                         [](const ModuleStats& m) { return m.name == "jit_global_sse"; });
  };
  const ModuleStats m = sse(r), a = sse(all);
  EXPECT_EQ(m.warmup_executions, 8u);
  EXPECT_GT(m.warmup_total_ps, 0);
  EXPECT_EQ(m.total_ps + m.warmup_total_ps, a.total_ps);
  EXPECT_NEAR(m.mean_ps, static_cast<double>(m.total_ps) / 24, 1e-3);
  EXPECT_NEAR(a.mean_ps, static_cast<double>(a.total_ps) / 32, 1e-3);
}

TEST(Modules, CpuEightDevicesTwoPrograms) {
  ModulesResult r = modules_of(testing::test_data("jax_cpu_8dev"));
  ASSERT_EQ(r.modules.size(), 2u);
  for (const ModuleStats& m : r.modules) {
    EXPECT_EQ(m.executions, 32u) << m.name;  // 4 steps x 8 devices
    // The first run on each device of global_sse, compiled inside the trace; train_step was
    // compiled before it.
    EXPECT_EQ(m.warmup_executions, m.name == "jit_global_sse" ? 8u : 0u);
    EXPECT_EQ(m.devices, 8u);
    EXPECT_DOUBLE_EQ(m.ops_per_execution, m.name == "jit_train_step" ? 17.0 : 5.0);
  }
  EXPECT_NEAR(r.modules[0].share + r.modules[1].share, 1.0, 1e-12);
}

// Steps: 4 StepTraceAnnotation("train") events on python3; step 0 compiles global_sse
// (tests/data/README.md). Figures from tests/python/steps_oracle.py on the committed file.
TEST(Modules, CpuEightDevicesSteps) {
  StepsResult s = modules_of(testing::test_data("jax_cpu_8dev")).steps;
  EXPECT_EQ(s.source, "host-annotation");
  ASSERT_EQ(s.steps.size(), 4u);
  const int64_t duration[] = {71483616000, 2035166000, 1863932000, 2082947000};
  const int64_t device[] = {15008165000, 9189986000, 8975164000, 12187692000};
  for (size_t i = 0; i < 4; ++i) {
    const Step& st = s.steps[i];
    EXPECT_EQ(st.number, static_cast<int64_t>(i));
    EXPECT_EQ(st.name, "train");
    EXPECT_EQ(st.duration_ps(), duration[i]);
    EXPECT_EQ(st.device_ps, device[i]);
    EXPECT_EQ(st.executions, 16u);  // both programs on 8 devices
    EXPECT_EQ(st.warmup, i == 0);
    ASSERT_EQ(st.modules.size(), 2u);
  }
  EXPECT_EQ(s.steps[0].start_ps, 62002000);
  EXPECT_EQ(s.steady_steps, 3u);
  EXPECT_DOUBLE_EQ(s.steady_mean_ps, (2035166000.0 + 1863932000.0 + 2082947000.0) / 3);
}

TEST(Modules, NoStepsWithoutAnnotations) {
  StepsResult s = modules_of(testing::test_data("jax_cpu_matmul")).steps;
  EXPECT_EQ(s.source, "none");
  EXPECT_TRUE(s.steps.empty());
}

}  // namespace
}  // namespace jaxprof
