// Module executions on the project's CPU captures (counts from tests/data/README.md) and on real
// GPU and TPU profiles (counts derived independently with tests/python/xplane_oracle.py).
#include "jaxprof/analysis/steps/module_executions.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "jaxprof/analysis/timeline/host_launches.h"
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

TEST(ModuleExecutions, CpuMatmulTenRunsOfTwoOps) {
  LoadedProfile lp = load(test_data("jax_cpu_matmul"));
  const std::vector<DeviceExecutions>& r = module_executions(lp.profile);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].source, ExecutionSource::kRunId);
  ASSERT_EQ(r[0].executions.size(), 10u);
  int64_t ops = 0;
  for (size_t i = 0; i < 10; ++i) {
    const ModuleExecution& x = r[0].executions[i];
    EXPECT_EQ(x.name, "jit_two_matmuls");
    EXPECT_EQ(x.program_id, 0u);
    EXPECT_EQ(x.events.size(), 2u);
    EXPECT_TRUE(x.run_id.has_value());
    // two_matmuls was compiled and run before the trace began: no run is warm-up.
    EXPECT_FALSE(x.warmup);
    EXPECT_GE(x.end_ps - x.start_ps, lp.profile.events.duration_ps[x.events[0]]);
    if (i > 0) {
      EXPECT_LE(r[0].executions[i - 1].end_ps, x.start_ps);
    }
    for (uint32_t e : x.events) ops += lp.profile.events.duration_ps[e];
  }
  EXPECT_EQ(ops, 35143993000);  // every op event is in one execution
}

TEST(ModuleExecutions, CpuEightDevicesFourStepsOfTwoPrograms) {
  LoadedProfile lp = load(test_data("jax_cpu_8dev"));
  const std::vector<DeviceExecutions>& r = module_executions(lp.profile);
  ASSERT_EQ(r.size(), 8u);
  for (const DeviceExecutions& d : r) {
    ASSERT_EQ(d.executions.size(), 8u) << d.device;
    std::map<std::string, int> count, ops, warm;
    for (const ModuleExecution& x : d.executions) {
      ++count[x.name];
      ops[x.name] += static_cast<int>(x.events.size());
      warm[x.name] += x.warmup;
    }
    EXPECT_EQ(count["jit_train_step"], 4);
    EXPECT_EQ(count["jit_global_sse"], 4);
    EXPECT_EQ(ops["jit_train_step"], 4 * 17);
    EXPECT_EQ(ops["jit_global_sse"], 4 * 5);
    // train_step was compiled before the trace, global_sse inside it (tests/data/README.md):
    // only global_sse's first run is warm-up.
    EXPECT_EQ(warm["jit_train_step"], 0);
    EXPECT_EQ(warm["jit_global_sse"], 1);
  }
}

// JAX 0.4.38 on 8 CPU devices (tests/data/capture_train_step.py, 4 steps): op events carry
// no run_id and no device_ordinal, so all 8 devices are one /host:CPU device. Each program ran
// 4 x 8 = 32 times, 21 ops per train_step run and 5 per local_sse run; grouping across threads
// by start order found 12 runs per program.
TEST(ModuleExecutions, CpuWithoutRunIdSplitsRunsPerHostThread) {
  LoadedProfile lp = load(test_data("jax_0_4_38_cpu_8dev.xplane.pb.gz"));
  const std::vector<DeviceExecutions>& r = module_executions(lp.profile);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].source, ExecutionSource::kHostThread);
  std::map<std::string, int> count;
  std::map<std::string, std::set<size_t>> sizes;
  for (const ModuleExecution& x : r[0].executions) {
    ++count[x.name];
    sizes[x.name].insert(x.events.size());
    EXPECT_FALSE(x.run_id.has_value());
    // One thread runs an execution's thunks one after another.
    for (size_t k = 1; k < x.events.size(); ++k)
      EXPECT_LE(lp.profile.events.end_ps(x.events[k - 1]), lp.profile.events.start_ps[x.events[k]]);
  }
  EXPECT_EQ(count["jit_train_step"], 32);
  EXPECT_EQ(count["jit_local_sse"], 32);
  EXPECT_EQ(sizes["jit_train_step"], std::set<size_t>{21});
  EXPECT_EQ(sizes["jit_local_sse"], std::set<size_t>{5});
}

}  // namespace
}  // namespace jaxprof

namespace jaxprof {
namespace {

// Each GPU kernel's launch (same correlation_id on the host) lies in one host ExecuteThunks
// event; there are 42 such events in the gemm profile and 55 in the elementwise one, and every
// kernel of a module belongs to one of them.
TEST(ModuleExecutions, GpuKernelsGroupedByHostExecution) {
  LoadedProfile lp = load(fixture("xplane/mi300x_jax_gemm.xplane.pb"));
  const std::vector<DeviceExecutions>& r = module_executions(lp.profile);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].source, ExecutionSource::kHostLaunch);
  ASSERT_EQ(r[0].executions.size(), 42u);
  // jit_dot(21) runs three times back to back, one kernel each: three executions, not one.
  int dot21 = 0, warm = 0;
  for (const ModuleExecution& x : r[0].executions) {
    EXPECT_EQ(x.events.size(), 1u);
    if (x.name == "jit_dot" && x.program_id == 21) ++dot21;
    warm += x.warmup;
  }
  EXPECT_EQ(dot21, 3);
  // 16 distinct program ids, none compiled in the capture (its host threads record no compile).
  EXPECT_EQ(warm, 0);

  LoadedProfile le = load(fixture("xplane/mi300x_jax_elementwise.xplane.pb"));
  const std::vector<DeviceExecutions>& re = module_executions(le.profile);
  ASSERT_EQ(re.size(), 1u);
  ASSERT_EQ(re[0].executions.size(), 55u);
  size_t kernels = 0;
  for (const ModuleExecution& x : re[0].executions) {
    kernels += x.events.size();
    // jit__mean and jit__reduce_sum launch two kernels per run.
    EXPECT_EQ(x.events.size(), x.name == "jit__mean" || x.name == "jit__reduce_sum" ? 2u : 1u);
  }
  EXPECT_EQ(kernels, 65u);
}

TEST(ModuleExecutions, GpuEightDevicesFiveRunsEach) {
  LoadedProfile lp = load(fixture("xplane/mi300x_jax_conv.xplane.pb"));
  const std::vector<DeviceExecutions>& r = module_executions(lp.profile);
  ASSERT_EQ(r.size(), 8u);
  for (size_t d = 0; d < 8; ++d) {
    ASSERT_EQ(r[d].executions.size(), 5u) << r[d].device;
    size_t kernels = 0;
    for (const ModuleExecution& x : r[d].executions) {
      EXPECT_EQ(x.name, "jit_forward_3d_conv");
      kernels += x.events.size();
    }
    // On GPU:0 two kernels of the second run carry no module stats (a broken correlation in the
    // capture): they belong to no module.
    EXPECT_EQ(kernels, d == 0 ? 23u : 25u) << r[d].device;
    // The host threads record no compile: the first run is not warm-up.
    EXPECT_FALSE(r[d].executions[0].warmup);
  }
}

// A host's launches are looked up by correlation id alike from a table indexed by id (the ids of
// these captures are dense) and from a hash map: every kernel finds its launch, and the launch
// its ExecuteThunks window.
TEST(HostLaunches, IdTableAndHashMapAgree) {
  for (const char* name :
       {"xplane/mi300x_jax_conv.xplane.pb", "xplane/mi300x_jax_elementwise.xplane.pb"}) {
    LoadedProfile lp = load(fixture(name));
    const Profile& p = lp.profile;
    std::vector<int64_t> kernels;  // the kernels' correlation ids
    for (uint32_t pi = 0; pi < p.planes.size(); ++pi) {
      if (p.planes[pi].kind != PlaneKind::kGpu) continue;
      p.require_lines(p.planes[pi].lines);
      for (uint32_t li : p.planes[pi].lines)
        for (uint32_t e = p.lines[li].first_event;
             e < p.lines[li].first_event + p.lines[li].event_count; ++e)
          if (auto id = p.event_stat(pi, e, "correlation_id")) kernels.push_back(*id->as_int());
    }
    ASSERT_FALSE(kernels.empty()) << name;
    for (bool all : {false, true}) {
      HostLaunches table = HostLaunches::index(p, 0, all);
      HostLaunches hashed = HostLaunches::index(p, 0, all, HostLaunches::IdLookup::kHashMap);
      size_t launched = 0, in_window = 0;
      for (int64_t id : kernels) {
        ASSERT_EQ(table.has_launch(id), hashed.has_launch(id)) << name << " id " << id;
        ASSERT_EQ(table.window_of(id), hashed.window_of(id)) << name << " id " << id;
        launched += table.has_launch(id);
        in_window += table.window_of(id).has_value();
      }
      EXPECT_EQ(launched, kernels.size()) << name;
      // The kernels the module executions above hold (198 and 65) lie in windows; on the conv
      // capture so do three that name no module.
      EXPECT_EQ(in_window, std::string(name).find("conv") != std::string::npos ? 201u : 65u)
          << name;
      int64_t highest = *std::max_element(kernels.begin(), kernels.end());
      EXPECT_FALSE(table.has_launch(highest + 1000000));
      EXPECT_FALSE(hashed.has_launch(-1));
    }
  }
}

TEST(ModuleExecutions, TpuModuleLine) {
  LoadedProfile lp = load(fixture("xplane/tpu_4chip_inference.xplane.pb"));
  const std::vector<DeviceExecutions>& r = module_executions(lp.profile);
  ASSERT_EQ(r.size(), 4u);
  EXPECT_EQ(r[0].source, ExecutionSource::kModuleLine);
  ASSERT_EQ(r[0].executions.size(), 105u);
  ASSERT_EQ(r[1].executions.size(), 103u);
  int jit_f = 0;
  for (const ModuleExecution& x : r[0].executions) {
    if (x.name != "jit_f") continue;
    EXPECT_EQ(x.program_id, 12190760917235803885ull);
    EXPECT_EQ(x.events.size(), 15u);
    EXPECT_EQ(x.warmup, jit_f == 0);
    EXPECT_TRUE(x.run_id.has_value());
    ++jit_f;
  }
  EXPECT_EQ(jit_f, 100);
  EXPECT_EQ(r[0].executions[0].name, "jit_convert_element_type");
  EXPECT_EQ(r[0].executions[0].start_ps, 5353251593250);
  EXPECT_EQ(r[0].executions[0].end_ps, 5353251593250 + 961328);
}

TEST(ModuleExecutions, NoModulesOnTensorFlowGpuProfile) {
  LoadedProfile lp = load(fixture("xplane/tf_v100_8gpu_training.xplane.pb"));
  for (const DeviceExecutions& d : module_executions(lp.profile)) {
    EXPECT_EQ(d.source, ExecutionSource::kNone);
    EXPECT_TRUE(d.executions.empty());
  }
}

}  // namespace
}  // namespace jaxprof
