// kernels on real GPU profiles; expected values come from the raw kernel_details strings and event
// durations read with a separate protobuf decoder (tests/python/xplane_oracle.py).
#include "jaxprof/analysis/ops/kernels.h"

#include <gtest/gtest.h>

#include "all_work.h"
#include "jaxprof/formats/load.h"
#include "test_paths.h"

namespace jaxprof {
namespace {

using testing::fixture;
using testing::test_data;
using Dim3 = std::array<int64_t, 3>;

LoadedProfile load(const std::string& path) {
  LoadedProfile out;
  load_profile({path}, {}, out);
  return out;
}

const KernelGroup* find(const KernelsResult& r, std::string_view name) {
  for (const KernelGroup& k : r.kernels)
    if (k.name == name) return &k;
  return nullptr;
}

TEST(Kernels, Mi300xGemm) {
  LoadedProfile lp = load(fixture("xplane/mi300x_jax_gemm.xplane.pb"));
  KernelsResult r = compute_kernels(lp.profile, {.steady = testing::kAllWork});
  EXPECT_TRUE(r.no_gpu_reason.empty());
  ASSERT_EQ(r.devices, std::vector<std::string>{"/device:GPU:0"});
  EXPECT_EQ(r.kernel_events, 54u);
  EXPECT_EQ(r.total_ps, 3475484000);
  ASSERT_EQ(r.kernels.size(), 8u);

  const KernelGroup& top = r.kernels[0];
  EXPECT_TRUE(top.name.starts_with("Cijk_Ailk_Bljk_BBS_BH_MT256x224x64_MI16x16x16x1_SN"));
  EXPECT_EQ(top.count, 3u);
  EXPECT_EQ(top.total_ps, 1833003000);
  EXPECT_EQ(top.hlo_op, "custom-call.1");
  EXPECT_EQ(top.module, "jit_dot");
  EXPECT_EQ(top.op_name, "jit(dot)/dot_general");
  ASSERT_EQ(top.configs.size(), 1u);
  EXPECT_EQ(top.configs[0].details,
            " grid:32,37,1 block:256,1,1 private_mem:0 group_mem:29568 occ_pct:0");
  EXPECT_EQ(top.configs[0].parsed.grid, (Dim3{32, 37, 1}));
  EXPECT_EQ(top.configs[0].parsed.shared_bytes(), 29568);

  // Five launch configurations (grids 16384 x5, 256 x2, 1024 x2, 32768 x2, 4096 x1).
  const KernelGroup* bcast = find(r, "wrapped_broadcast.kd");
  ASSERT_NE(bcast, nullptr);
  EXPECT_EQ(bcast->count, 12u);
  EXPECT_EQ(bcast->total_ps, 153720000);
  ASSERT_EQ(bcast->configs.size(), 5u);
  uint64_t n = 0;
  for (const KernelConfig& c : bcast->configs) {
    n += c.count;
    EXPECT_EQ(c.parsed.block, (Dim3{256, 1, 1}));
    if (c.parsed.grid == Dim3{16384, 1, 1}) {
      EXPECT_EQ(c.count, 5u);
    } else if (c.parsed.grid == Dim3{4096, 1, 1}) {
      EXPECT_EQ(c.count, 1u);
    }
  }
  EXPECT_EQ(n, 12u);

  const KernelGroup* copy = find(r, "__amd_rocclr_copyBuffer.kd");
  ASSERT_NE(copy, nullptr);
  EXPECT_EQ(copy->count, 24u);
  EXPECT_EQ(copy->total_ps, 87880000);
  EXPECT_EQ(copy->configs[0].parsed.block, (Dim3{512, 1, 1}));
}

TEST(Kernels, FiltersAndTop) {
  LoadedProfile lp = load(fixture("xplane/mi300x_jax_gemm.xplane.pb"));
  KernelsOptions o;
  o.steady = testing::kAllWork;
  o.filter.prefix = "Cijk_";
  KernelsResult gemms = compute_kernels(lp.profile, o);
  EXPECT_EQ(gemms.kernels.size(), 5u);
  EXPECT_EQ(gemms.kernel_events, 15u);
  o.filter.prefix.clear();
  o.top = 2;
  EXPECT_EQ(compute_kernels(lp.profile, o).kernels.size(), 2u);
  o.top = 0;
  o.filter.device = "GPU:5";
  KernelsResult none = compute_kernels(lp.profile, o);
  EXPECT_TRUE(none.kernels.empty());
  EXPECT_NE(none.no_gpu_reason.find("--device"), std::string::npos);
}

TEST(Kernels, NonGpuProfilesSaySo) {
  LoadedProfile cpu = load(test_data("jax_cpu_8dev"));
  KernelsResult r = compute_kernels(cpu.profile, {.steady = testing::kAllWork});
  EXPECT_TRUE(r.kernels.empty());
  EXPECT_NE(r.no_gpu_reason.find("no GPU kernels"), std::string::npos);
  LoadedProfile tpu = load(fixture("xplane/tpu_4chip_inference.xplane.pb"));
  KernelsResult t = compute_kernels(tpu.profile, {.steady = testing::kAllWork});
  EXPECT_TRUE(t.kernels.empty());
  EXPECT_NE(t.no_gpu_reason.find("/device:TPU:0"), std::string::npos);
}

TEST(Kernels, OlderTensorFlowFormatLeavesCopiesOut) {
  LoadedProfile lp = load(fixture("xplane/tf_v100_8gpu_training.xplane.pb"));
  KernelsResult r = compute_kernels(lp.profile, {.steady = testing::kAllWork});
  ASSERT_FALSE(r.kernels.empty());
  for (const KernelGroup& k : r.kernels) {
    EXPECT_EQ(k.name.find("Memcpy"), std::string::npos) << k.name;
    for (const KernelConfig& c : k.configs) {
      ASSERT_TRUE(c.parsed.block.has_value()) << c.details;
      EXPECT_TRUE(c.parsed.registers.has_value()) << c.details;
    }
  }
}

}  // namespace
}  // namespace jaxprof
