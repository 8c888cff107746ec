// summary on the project's JAX CPU captures and the shared fixtures: its sections agree with the
// analyses it is built from, and the observation rules fire where the numbers say they must.
#include "jaxprof/analysis/summary/summary.h"

#include <gtest/gtest.h>

#include "all_work.h"
#include "jaxprof/analysis/compile/compile.h"
#include "jaxprof/analysis/ops/ops.h"
#include "jaxprof/analysis/timeline/timeline.h"
#include "jaxprof/formats/load.h"
#include "test_paths.h"

namespace jaxprof {
namespace {

using testing::fixture;
using testing::test_data;

LoadedProfile load(const std::string& path) {
  LoadedProfile out;
  load_profile({path}, {}, out);
  return out;
}

const Observation* find(const SummaryResult& r, const std::string& rule) {
  for (const Observation& o : r.observations)
    if (o.rule == rule) return &o;
  return nullptr;
}

TEST(Summary, EightDeviceCapture) {
  LoadedProfile lp = load(test_data("jax_cpu_8dev"));
  SummaryOptions o;
  o.steady = testing::kAllWork;
  o.observations = 10;
  SummaryResult r = compute_summary(lp.profile, o);
  const SummaryDeviceTime& d = r.device;
  EXPECT_EQ(d.devices, 8u);
  // The timeline's exact partition, summed over devices.
  EXPECT_EQ(d.compute_ps + d.comm_exposed_ps + d.memcpy_exposed_ps + d.idle_ps, d.span_ps);
  EXPECT_EQ(d.idle_in_modules_ps + d.idle_between_modules_ps, d.idle_ps);
  // Ops: 704 op events in all (tests/data/README.md), all-reduce.5 the largest at 34.604103 ms.
  ASSERT_FALSE(r.ops.empty());
  EXPECT_EQ(r.ops[0].name, "all-reduce.5");
  EXPECT_EQ(r.ops[0].total_ps, 34604103000);
  EXPECT_EQ(r.ops[0].count, 32u);
  EXPECT_NE(r.ops[0].source.find("capture_cpu_profiles.py:"), std::string::npos);
  int64_t busy = 0;
  for (const DeviceOps& dev : compute_ops(lp.profile, {.steady = testing::kAllWork}).devices)
    busy += dev.busy_ps;
  EXPECT_EQ(busy, d.busy_ps);
  EXPECT_DOUBLE_EQ(r.ops[0].share, 34604103000.0 / static_cast<double>(busy));
  // Modules: train_step and global_sse, 32 executions each (4 runs x 8 devices); train_step was
  // compiled before the trace (no warm-up), global_sse inside it (one per device).
  ASSERT_EQ(r.modules.size(), 2u);
  EXPECT_EQ(r.modules[0].name, "jit_train_step");
  EXPECT_EQ(r.modules[0].executions, 32u);
  EXPECT_EQ(r.modules[0].warmup_executions, 0u);
  // Collectives: both all-reduces over 8 devices, fully exposed on the CPU backend.
  ASSERT_EQ(r.collectives.size(), 2u);
  EXPECT_EQ(r.collectives[0].name, "all-reduce.5");
  EXPECT_EQ(r.collectives[0].group_size, 8);
  EXPECT_EQ(r.collectives[0].exposed_ps, 34604103000);
  EXPECT_DOUBLE_EQ(r.collectives[0].exposed_per_execution_ps, 34604103000.0 / 32);
  // Compile: global_sse compiled inside the capture (see compile_test.cc).
  EXPECT_EQ(r.compile.compiles, 1u);
  EXPECT_EQ(r.compile.wall_ps, 67278303000);
  EXPECT_EQ(r.compile.top_module, "jit_global_sse");
  // Step 0 holds the compile while the devices wait: over 90% idle between module executions.
  const Observation* idle = find(r, "idle-between-modules");
  ASSERT_NE(idle, nullptr);
  EXPECT_GT(idle->share, 0.9);
  ASSERT_NE(find(r, "compile"), nullptr);
  ASSERT_NE(find(r, "dominant-op"), nullptr);  // all-reduce.5 is 77% of busy time
  ASSERT_NE(find(r, "exposed-collective"), nullptr);
  for (size_t i = 1; i < r.observations.size(); ++i)
    EXPECT_GE(r.observations[i - 1].time_ps, r.observations[i].time_ps);
  // The default keeps three.
  EXPECT_EQ(compute_summary(lp.profile, {.steady = testing::kAllWork}).observations.size(), 3u);
}

TEST(Summary, MatmulCaptureOneOpDominates) {
  LoadedProfile lp = load(test_data("jax_cpu_matmul"));
  SummaryResult r = compute_summary(lp.profile, {.steady = testing::kAllWork});
  // ynn_fusion (512x512) is 30,723,402,000 of 35,143,993,000 ps busy: 87%.
  const Observation* dom = find(r, "dominant-op");
  ASSERT_NE(dom, nullptr);
  EXPECT_DOUBLE_EQ(dom->share, 30723402000.0 / 35143993000.0);
  EXPECT_EQ(find(r, "idle-between-modules"), nullptr);  // 3.6% idle only
  EXPECT_EQ(r.compile.compiles, 0u);
}

TEST(Summary, EveryFixtureIsConsistent) {
  for (const char* name :
       {"xplane/mi300x_jax_gemm.xplane.pb", "xplane/mi300x_jax_conv.xplane.pb",
        "xplane/mi300x_jax_elementwise.xplane.pb", "xplane/tpu_4chip_inference.xplane.pb",
        "xplane/tf_v100_8gpu_training.xplane.pb"}) {
    SCOPED_TRACE(name);
    LoadedProfile lp = load(fixture(name));
    SummaryResult r = compute_summary(lp.profile, {.steady = testing::kAllWork});
    TimelineResult tl = compute_timeline(lp.profile, testing::kAllWork);
    EXPECT_EQ(r.device.devices, tl.devices.size());
    EXPECT_EQ(r.device.compute_ps + r.device.comm_exposed_ps + r.device.memcpy_exposed_ps +
                  r.device.idle_ps,
              r.device.span_ps);
    EXPECT_LE(r.observations.size(), 3u);
    for (const SummaryOp& op : r.ops) EXPECT_LE(op.share, 1.0 + 1e-12);
    EXPECT_EQ(r.compile.wall_ps, compute_compile(lp.profile).wall_ps);
  }
}

}  // namespace
}  // namespace jaxprof
