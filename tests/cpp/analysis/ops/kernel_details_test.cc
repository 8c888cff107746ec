// kernel_details parsing for the three producer formats (strings as they appear in real profiles).
#include "jaxprof/analysis/ops/kernel_details.h"

#include <gtest/gtest.h>

namespace jaxprof {
namespace {

using Dim3 = std::array<int64_t, 3>;

TEST(KernelDetails, Rocm) {
  // mi300x_jax_gemm.xplane.pb, Cijk_..._MT256x224x64 kernel (note the leading space).
  KernelDetails d =
      parse_kernel_details(" grid:32,37,1 block:256,1,1 private_mem:0 group_mem:29568 occ_pct:0");
  EXPECT_EQ(d.grid, (Dim3{32, 37, 1}));
  EXPECT_EQ(d.block, (Dim3{256, 1, 1}));
  EXPECT_EQ(d.shared_bytes(), 29568);
  EXPECT_EQ(d.private_mem, 0);
  EXPECT_EQ(d.occupancy_pct, 0.0);
  EXPECT_FALSE(d.registers.has_value());
}

TEST(KernelDetails, XlaCupti) {
  KernelDetails d = parse_kernel_details(
      "regs:32 static_shared:1024 dynamic_shared:49152 grid:4,2,1 block:128,1,1 occ_pct:62.5");
  EXPECT_EQ(d.registers, 32);
  EXPECT_EQ(d.static_shared, 1024);
  EXPECT_EQ(d.dynamic_shared, 49152);
  EXPECT_EQ(d.shared_bytes(), 1024 + 49152);
  EXPECT_EQ(d.grid, (Dim3{4, 2, 1}));
  EXPECT_EQ(d.block, (Dim3{128, 1, 1}));
  EXPECT_EQ(d.occupancy_pct, 62.5);
}

TEST(KernelDetails, OlderTensorFlow) {
  // tf_v100_8gpu_training.xplane.pb, FillPhiloxRandomKernelLaunch on /device:GPU:4.
  KernelDetails d = parse_kernel_details("regs:38 shm:0 grid:160,1,1 block:1024,1,1");
  EXPECT_EQ(d.registers, 38);
  EXPECT_EQ(d.shared_bytes(), 0);
  EXPECT_EQ(d.grid, (Dim3{160, 1, 1}));
  EXPECT_EQ(d.block, (Dim3{1024, 1, 1}));
  EXPECT_FALSE(d.occupancy_pct.has_value());
}

TEST(KernelDetails, MalformedFieldsStayEmpty) {
  KernelDetails d = parse_kernel_details("regs:x grid:1,2,3,4 block:64 occ_pct:abc future:7 junk");
  EXPECT_FALSE(d.registers.has_value());
  EXPECT_FALSE(d.grid.has_value());
  EXPECT_EQ(d.block, (Dim3{64, 1, 1}));  // missing trailing dimensions are 1
  EXPECT_FALSE(d.occupancy_pct.has_value());
  EXPECT_EQ(parse_kernel_details(""), KernelDetails{});
}

}  // namespace
}  // namespace jaxprof
