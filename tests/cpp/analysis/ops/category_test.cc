// Categories: from the HLO instruction on real profiles (a convert fusion is not a convolution),
// from custom-call targets, and from names by whole words when there is no HLO.
#include "jaxprof/analysis/ops/category.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "cached_profile.h"
#include "jaxprof/analysis/ops/ops.h"
#include "jaxprof/formats/load.h"
#include "test_paths.h"

namespace jaxprof {
namespace {

using testing::fixture;

TEST(CategoryByName, WholeWordsOnly) {
  // The words "convert" and "conv" differ: this is what matched "_conv" inside "_convert".
  EXPECT_EQ(categorize_name("loop_convert_fusion"), OpCategory::kElementwise);
  EXPECT_EQ(categorize_name("wrapped_convert"), OpCategory::kElementwise);
  EXPECT_EQ(categorize_name("input_convert_reduce_fusion.13"), OpCategory::kElementwise);
  EXPECT_EQ(categorize_name("cudnn-conv.1"), OpCategory::kConvolution);
  EXPECT_EQ(categorize_name("conv_forward_fusion"), OpCategory::kConvolution);
  EXPECT_EQ(categorize_name("Im3d2Col.kd"), OpCategory::kConvolution);
  EXPECT_EQ(categorize_name("sm80_xmma_fprop_implicit_gemm_bf16bf16_bf16f32"),
            OpCategory::kConvolution);
  EXPECT_EQ(categorize_name("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64"),
            OpCategory::kGemm);
  EXPECT_EQ(categorize_name("ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_tn"), OpCategory::kGemm);
  EXPECT_EQ(categorize_name("Cijk_Alik_Bljk_BBS_BH_MT128x128x64"), OpCategory::kGemm);
  EXPECT_EQ(categorize_name("dot.3"), OpCategory::kGemm);
  EXPECT_EQ(categorize_name("ncclDevKernel_AllReduce_Sum_f32_RING_LL"), OpCategory::kCollective);
  EXPECT_EQ(categorize_name("all-reduce.5"), OpCategory::kCollective);
  EXPECT_EQ(categorize_name("reduce-scatter.131"), OpCategory::kCollective);
  EXPECT_EQ(categorize_name("flash_fwd_kernel"), OpCategory::kAttention);
  EXPECT_EQ(categorize_name("cudnn_generated_fort_native_sdpa_sm90_knob_7"),
            OpCategory::kAttention);
  EXPECT_EQ(categorize_name("__amd_rocclr_copyBuffer.kd"), OpCategory::kMemcpy);
  EXPECT_EQ(categorize_name("MemcpyH2D"), OpCategory::kMemcpy);
  // Substrings of longer words decide nothing.
  EXPECT_EQ(categorize_name("reconvolve_weights"), OpCategory::kOther);
  EXPECT_EQ(categorize_name("dotted_line"), OpCategory::kOther);
  EXPECT_EQ(categorize_name("flashy"), OpCategory::kOther);
}

const LoadedProfile* load(const std::string& path) { return testing::cached_profile(path); }

std::map<std::string, std::string> categories(const Profile& p, std::string_view device) {
  OpsOptions o;
  o.filter.device = std::string(device);
  std::map<std::string, std::string> out;
  for (const DeviceOps& d : compute_ops(p, o).devices)
    for (const OpGroup& g : d.groups) out[g.module + "/" + g.name] = g.category;
  return out;
}

TEST(CategoryFromHlo, ConvertFusionsAreNotConvolutions) {
  const LoadedProfile* lp = load(fixture("xplane/mi300x_jax_elementwise.xplane.pb"));
  if (!lp) GTEST_SKIP() << "shared fixtures missing";
  for (const auto& [op, category] : categories(lp->profile, "GPU:0")) {
    SCOPED_TRACE(op);
    EXPECT_NE(category, "convolution");
    if (op.ends_with("loop_convert_fusion")) {
      EXPECT_EQ(category, "elementwise/fusion");
    }
  }
}

TEST(CategoryFromHlo, CustomCallTargetsAndFusedDots) {
  const LoadedProfile* conv = load(fixture("xplane/mi300x_jax_conv.xplane.pb"));
  const LoadedProfile* gemm = load(fixture("xplane/mi300x_jax_gemm.xplane.pb"));
  if (!conv || !gemm) GTEST_SKIP() << "shared fixtures missing";
  auto c = categories(conv->profile, "GPU:1");
  EXPECT_EQ(c.at("jit_forward_3d_conv/cudnn-conv.1"), "convolution");  // __cudnn$convForward
  // The transposes XLA puts around the convolution move data; their names say nothing.
  EXPECT_EQ(c.at("jit_forward_3d_conv/input_transpose_fusion"), "elementwise/fusion");
  auto g = categories(gemm->profile, "GPU:0");
  EXPECT_EQ(g.at("jit_dot/custom-call.1"), "gemm");  // __cublas$gemm (hipBLASLt on ROCm)
  // A Triton GEMM fusion: its fused computation holds the dot.
  EXPECT_EQ(g.at("jit_dot/gemm_fusion_dot_general.1"), "gemm");
  EXPECT_EQ(g.at("jit_broadcast_in_dim/wrapped_broadcast"), "elementwise/fusion");
}

TEST(CategoryFromHlo, TpuCopiesAndCollectives) {
  const LoadedProfile* lp = load(fixture("xplane/tpu_4chip_inference.xplane.pb"));
  if (!lp) GTEST_SKIP() << "shared fixtures missing";
  auto c = categories(lp->profile, "TPU:0");
  EXPECT_EQ(c.at("jit__psum/all-reduce"), "collective");
  EXPECT_EQ(c.at("jit_f/copy-done"), "memcpy");
  EXPECT_EQ(c.at("jit_f/broadcast_add_fusion"), "elementwise/fusion");
}

}  // namespace
}  // namespace jaxprof
