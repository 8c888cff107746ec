// timeline on the project's CPU captures (numbers from tests/data/README.md) and on real GPU and
// TPU profiles (numbers computed independently by tests/python/timeline_oracle.py).
#include "jaxprof/analysis/timeline/timeline.h"

#include <gtest/gtest.h>

#include "all_work.h"
#include "jaxprof/formats/load.h"
#include "test_paths.h"

namespace jaxprof {
namespace {

using testing::fixture;
using testing::test_data;

TimelineResult timeline_of(const std::string& path) {
  LoadedProfile lp;
  load_profile({path}, {}, lp);
  return compute_timeline(lp.profile, testing::kAllWork);
}

void expect_identity(const TimelineResult& r) {
  for (const DeviceTimeline& d : r.devices) {
    EXPECT_EQ(d.compute_ps + d.comm_exposed_ps + d.memcpy_exposed_ps + d.idle_ps, d.span_ps)
        << d.device;
    EXPECT_EQ(d.busy_ps + d.idle_ps, d.span_ps) << d.device;
    EXPECT_EQ(d.idle_in_modules_ps + d.idle_between_modules_ps, d.idle_ps) << d.device;
    EXPECT_LE(d.comm_exposed_ps, d.comm_ps);
    EXPECT_LE(d.memcpy_exposed_ps, d.memcpy_ps);
  }
}

TEST(Timeline, CpuMatmulIsAllCompute) {
  TimelineResult r = timeline_of(test_data("jax_cpu_matmul"));
  ASSERT_EQ(r.devices.size(), 1u);
  const DeviceTimeline& d = r.devices[0];
  EXPECT_EQ(d.events, 20u);
  EXPECT_EQ(d.executions, 10u);
  EXPECT_EQ(d.compute_ps, 35143993000);  // ops never overlap: the union is the sum
  EXPECT_EQ(d.busy_ps, 35143993000);
  EXPECT_EQ(d.comm_ps, 0);
  EXPECT_EQ(d.memcpy_ps, 0);
  EXPECT_EQ(d.span_ps, 36476385000);
  EXPECT_EQ(d.idle_in_modules_ps, 2266000);  // gaps between the two dots of one run
  expect_identity(r);
}

TEST(Timeline, CpuEightDevicesAllReducesAreCommunication) {
  TimelineResult r = timeline_of(test_data("jax_cpu_8dev"));
  ASSERT_EQ(r.devices.size(), 8u);
  int64_t comm = 0, exposed = 0;
  for (const DeviceTimeline& d : r.devices) {
    comm += d.comm_ps;
    exposed += d.comm_exposed_ps;
    EXPECT_EQ(d.executions, 8u);
  }
  // all-reduce.5 + psum_invariant.7 over all devices; nothing overlaps them on a CPU device.
  EXPECT_EQ(comm, 34604103000 + 8635646000);
  EXPECT_EQ(exposed, comm);
  expect_identity(r);
}

TEST(Timeline, TpuNumbers) {
  TimelineResult r = timeline_of(fixture("xplane/tpu_4chip_inference.xplane.pb"));
  ASSERT_EQ(r.devices.size(), 4u);
  const DeviceTimeline& d = r.devices[0];
  EXPECT_EQ(d.span_ps, 92477083032672);
  EXPECT_EQ(d.busy_ps, 78784927635502);
  EXPECT_EQ(d.compute_ps, 2371482589318);
  EXPECT_EQ(d.comm_exposed_ps, 365076256344);
  EXPECT_EQ(d.memcpy_exposed_ps, 76048368789840);  // copy-done waits for host offload
  EXPECT_EQ(d.idle_ps, 13692155397170);
  EXPECT_EQ(d.idle_in_modules_ps, 24642437728);
  EXPECT_EQ(d.executions, 105u);
  expect_identity(r);
}

TEST(Timeline, OverlappingStreamsHideMemcpy) {
  // TensorFlow on V100: memcpy streams run beside the compute stream, so part of the memcpy
  // time is hidden behind compute.
  TimelineResult r = timeline_of(fixture("xplane/tf_v100_8gpu_training.xplane.pb"));
  ASSERT_EQ(r.devices.size(), 3u);
  const DeviceTimeline& d = r.devices[1];
  EXPECT_EQ(d.device, "/device:GPU:4");
  EXPECT_LT(d.memcpy_exposed_ps, d.memcpy_ps);
  EXPECT_GT(d.memcpy_exposed_ps, 0);
  EXPECT_EQ(d.executions, 0u);  // no XLA modules: all idle is between modules
  EXPECT_EQ(d.idle_between_modules_ps, d.idle_ps);
  expect_identity(r);
}

TEST(Timeline, IdentityOnEveryGpuFixture) {
  for (const char* name : {"mi300x_jax_conv", "mi300x_jax_elementwise", "mi300x_jax_gemm"}) {
    TimelineResult r = timeline_of(fixture(std::string("xplane/") + name + ".xplane.pb"));
    ASSERT_FALSE(r.devices.empty()) << name;
    expect_identity(r);
  }
}

}  // namespace
}  // namespace jaxprof
