// modules on the CPU captures: counts from tests/data/README.md; the total of the matmul runs
// equals the op time plus the idle time inside runs that timeline measures separately.
#include "jaxprof/analysis/modules.h"

#include <gtest/gtest.h>

#include "jaxprof/formats/load.h"
#include "test_paths.h"

namespace jaxprof {
namespace {

ModulesResult modules_of(const std::string& path) {
  LoadedProfile lp;
  load_profile({path}, {}, lp);
  return compute_modules(lp.profile);
}

TEST(Modules, CpuMatmulWarmupApart) {
  ModulesResult r = modules_of(testing::test_data("jax_cpu_matmul"));
  ASSERT_EQ(r.modules.size(), 1u);
  const ModuleStats& m = r.modules[0];
  EXPECT_EQ(m.name, "jit_two_matmuls");
  EXPECT_EQ(m.program_id, 0u);
  EXPECT_EQ(m.executions, 10u);
  EXPECT_EQ(m.warmup_executions, 1u);
  EXPECT_DOUBLE_EQ(m.ops_per_execution, 2.0);
  // 35,143,993,000 ps of ops + 2,266,000 ps of gaps between the two dots of each run.
  EXPECT_EQ(m.total_ps, 35143993000 + 2266000);
  EXPECT_NEAR(m.mean_ps, static_cast<double>(m.total_ps - m.warmup_total_ps) / 9, 1e-3);
  EXPECT_DOUBLE_EQ(m.share, 1.0);
  ASSERT_EQ(m.varying_ops.size(), 2u);
  EXPECT_EQ(m.varying_ops[0].count, 9u);
}

TEST(Modules, CpuEightDevicesTwoPrograms) {
  ModulesResult r = modules_of(testing::test_data("jax_cpu_8dev"));
  ASSERT_EQ(r.modules.size(), 2u);
  for (const ModuleStats& m : r.modules) {
    EXPECT_EQ(m.executions, 32u) << m.name;  // 4 steps x 8 devices
    EXPECT_EQ(m.warmup_executions, 8u);      // the first run on each device
    EXPECT_EQ(m.devices, 8u);
    EXPECT_DOUBLE_EQ(m.ops_per_execution, m.name == "jit_train_step" ? 17.0 : 5.0);
  }
  EXPECT_NEAR(r.modules[0].share + r.modules[1].share, 1.0, 1e-12);
}

}  // namespace
}  // namespace jaxprof
