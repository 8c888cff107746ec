// Steady state on process 0 of the shared nsys-jax run: the autotuner's executions (modules
// without a program id) and each program's first run are set apart, the compile windows are set
// apart from device time, and every figure comes back with the options.
#include "jaxprof/analysis/steps/steady_state.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "all_work.h"
#include "jaxprof/analysis/steps/module_executions.h"
#include "jaxprof/analysis/ops/ops.h"
#include "jaxprof/analysis/timeline/timeline.h"
#include "jaxprof/formats/load.h"
#include "jaxprof/io/base64.h"
#include "test_paths.h"

namespace jaxprof {
namespace {

std::string proc0() { return testing::fixture("nsys-jax/pax_fsdp4_4proc_proc0.zip"); }

TEST(SteadyState, AutotunerAndWarmupOfAnNsysJaxRun) {
  if (!std::filesystem::exists(proc0())) GTEST_SKIP() << "no shared nsys-jax fixtures";
  LoadedProfile lp;
  load_profile({proc0()}, {}, lp);
  const Profile& p = lp.profile;
  const SteadyState& s = steady_state(p, {});
  const std::vector<DeviceExecutions>& all = module_executions(p);
  ASSERT_EQ(s.roles.size(), all.size());
  // 323 executions: 290 of the autotuner's extracted modules (nine of them), 17 first runs of
  // the 17 programs, 16 steady runs (four steps and the programs run more than once).
  EXPECT_EQ(s.autotuning.executions, 290u);
  EXPECT_EQ(s.autotuning.modules.size(), 9u);
  EXPECT_EQ(s.warmup.executions, 17u);
  uint64_t steady = 0;
  for (size_t k = 0; k < all[0].executions.size(); ++k) {
    const ModuleExecution& x = all[0].executions[k];
    if (s.roles[0][k] == ExecutionRole::kAutotuning) {
      EXPECT_EQ(x.program_id, kNoProgram);
    }
    if (s.roles[0][k] == ExecutionRole::kSteady) {
      ++steady;
      EXPECT_FALSE(x.warmup);
      EXPECT_NE(x.program_id, kNoProgram);
    }
  }
  EXPECT_EQ(steady, 323u - 290 - 17);

  OpsResult ops = compute_ops(p, {});
  OpsResult everything = compute_ops(p, {.steady = testing::kAllWork});
  ASSERT_EQ(ops.devices.size(), 1u);
  EXPECT_EQ(ops.devices[0].events + ops.devices[0].set_apart, everything.devices[0].events);
  EXPECT_EQ(everything.devices[0].events, 13827u);
  EXPECT_EQ(everything.devices[0].groups.front().name, "gemm_fusion_dot.411");
  for (const OpGroup& g : ops.devices[0].groups) EXPECT_NE(g.module, "gemm_fusion_dot.411");

  // Compile windows: 17 compiles, 69.4 s of the host; the device's set-apart time covers them
  // (less what steady runs overlap) and its parts still add up to the span.
  const SteadyStateTime& t = steady_state_time(p, {});
  EXPECT_EQ(t.compiles.compiles.size(), 17u);
  TimelineResult tl = compute_timeline(p, {});
  ASSERT_EQ(tl.devices.size(), 1u);
  const DeviceTimeline& d = tl.devices[0];
  EXPECT_GT(d.set_apart_ps, t.compiles.wall_ps);
  EXPECT_EQ(d.compute_ps + d.comm_exposed_ps + d.memcpy_exposed_ps + d.idle_ps + d.set_apart_ps,
            d.span_ps);
  TimelineResult whole = compute_timeline(p, testing::kAllWork);
  EXPECT_EQ(whole.devices[0].set_apart_ps, 0);
  EXPECT_EQ(whole.devices[0].span_ps, d.span_ps);
}

TEST(SteadyState, ProfilesWithoutProgramIdsSetNoAutotuningApart) {
  // The TensorFlow profile has no module executions at all; the CPU capture has program ids on
  // every execution.
  for (const std::string& path : {testing::fixture("xplane/tf_v100_8gpu_training.xplane.pb"),
                                  testing::test_data("jax_cpu_8dev")}) {
    if (!std::filesystem::exists(path)) continue;
    LoadedProfile lp;
    load_profile({path}, {}, lp);
    EXPECT_EQ(steady_state(lp.profile, {}).autotuning.executions, 0u) << path;
  }
}

TEST(Base64, RoundTripsEveryLength) {
  std::string bytes;
  for (int i = 0; i < 300; ++i) {
    std::string text = base64_encode(bytes);
    EXPECT_EQ(text.size() % 4, 0u);
    auto back = base64_decode(text);
    ASSERT_TRUE(back.has_value()) << i;
    EXPECT_EQ(std::string(back->begin(), back->end()), bytes);
    bytes += static_cast<char>(i * 37 + 11);
  }
  EXPECT_EQ(base64_encode("jax"), "amF4");
  EXPECT_EQ(base64_encode("jaxprof"), "amF4cHJvZg==");
  EXPECT_FALSE(base64_decode("amF4cHJvZg=").has_value());
  EXPECT_FALSE(base64_decode("am!4").has_value());
}

}  // namespace
}  // namespace jaxprof
