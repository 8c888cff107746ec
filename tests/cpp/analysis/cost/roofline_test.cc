// jaxprof roofline on the shared real profiles: FLOPs of GEMMs and convolutions against their
// closed-form counts for the fixtures' shapes (read from the HLO text of each program), where
// every op's cost comes from, the peaks and their sources, and the share of device time that gets
// FLOPs and bytes.
#include "jaxprof/analysis/cost/roofline.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <tuple>

#include "all_work.h"
#include "cached_profile.h"
#include "jaxprof/analysis/cost/hardware_peaks_table.h"
#include "jaxprof/common/error.h"
#include "jaxprof/formats/load.h"
#include "test_paths.h"

namespace jaxprof {
namespace {

using testing::fixture;
using testing::test_data;

const LoadedProfile* load(const std::string& path) { return testing::cached_profile(path); }

#define LOAD_OR_SKIP(var, path)          \
  const LoadedProfile* var = load(path); \
  if (!var) GTEST_SKIP() << "shared fixture missing: " << path;

const RooflineOp* find_op(const RooflineDevice& d, std::string_view name, ProgramId program) {
  for (const RooflineOp& o : d.ops)
    if (o.name == name && o.program_id == program) return &o;
  return nullptr;
}

double coverage(const RooflineResult& r) {
  int64_t total = 0, known = 0;
  for (const RooflineDevice& d : r.devices) {
    total += d.coverage.total_ps;
    known += d.coverage.known_ps;
  }
  return total > 0 ? static_cast<double>(known) / static_cast<double>(total) : 0;
}

TEST(Roofline, GemmCustomCallsMatchClosedFormCounts) {
  LOAD_OR_SKIP(lp, fixture("xplane/mi300x_jax_gemm.xplane.pb"));
  RooflineResult r = compute_roofline(lp->profile, {});
  ASSERT_EQ(r.devices.size(), 1u);
  const RooflineDevice& d = r.devices[0];
  // program id -> M, N, K of `a @ b` (bf16[M,K] x bf16[K,N]), from each jit_dot's HLO.
  const std::map<ProgramId, std::tuple<uint64_t, uint64_t, uint64_t>> gemms = {
      {79, {16384, 4096, 1024}},
      {49, {8192, 8192, 4096}},
      {34, {4096, 4096, 4096}},
      {64, {2048, 2048, 8192}},
      {21, {1024, 1024, 1024}}};
  for (const auto& [program, mnk] : gemms) {
    const auto [m, n, k] = mnk;
    SCOPED_TRACE(program);
    const RooflineOp* op = find_op(d, "custom-call.1", program);
    ASSERT_NE(op, nullptr);
    EXPECT_EQ(op->source, CostSource::kCustomCall);
    EXPECT_EQ(op->category, "gemm");
    EXPECT_EQ(op->compute, ComputeType::kBf16);
    ASSERT_TRUE(op->figures.flops);
    EXPECT_EQ(*op->figures.flops, op->count * 2 * m * n * k);
    // A and B read, C written; the cuBLAS workspace is not data.
    EXPECT_EQ(*op->figures.bytes_accessed, op->count * 2 * (m * k + k * n + m * n));
    EXPECT_EQ(op->figures.bound,
              m * n * k >= 4096ull * 4096 * 4096 / 8 ? Bound::kCompute : Bound::kLatency);
  }
  // The small Triton GEMM fusion: the dot inside its fused computation, 256^3.
  const RooflineOp* fusion = find_op(d, "gemm_fusion_dot_general.1", 5);
  ASSERT_NE(fusion, nullptr);
  EXPECT_EQ(fusion->source, CostSource::kHlo);
  EXPECT_EQ(fusion->category, "gemm");
  EXPECT_EQ(*fusion->figures.flops, fusion->count * 2ull * 256 * 256 * 256);
  EXPECT_EQ(*fusion->figures.bytes_accessed, fusion->count * 3ull * 256 * 256 * 2);
  EXPECT_GE(coverage(r), 0.95);
}

TEST(Roofline, CudnnConvolutionMatchesTheClosedFormCount) {
  LOAD_OR_SKIP(lp, fixture("xplane/mi300x_jax_conv.xplane.pb"));
  RooflineResult r = compute_roofline(lp->profile, {});
  ASSERT_EQ(r.devices.size(), 8u);
  for (const RooflineDevice& d : r.devices) {
    SCOPED_TRACE(d.device);
    const RooflineOp* conv = find_op(d, "cudnn-conv.1", 15);
    ASSERT_NE(conv, nullptr);
    EXPECT_EQ(conv->source, CostSource::kCustomCall);
    EXPECT_EQ(conv->category, "convolution");
    EXPECT_EQ(conv->detail, "cudnn conv forward");
    // bf16[1,16,32,60,104] (bf012) * bf16[5120,16,1,2,2] (oi012), window 1x2x2, stride 1x2x2,
    // padding 1 on each side: valid (output, kernel) pairs per spatial dimension 32, 60, 104.
    const uint64_t per = 2ull * 16 * 5120 * 1 * (32 * 60 * 104);
    EXPECT_EQ(*conv->figures.flops, conv->count * per);
    // Kernels the profile names no HLO op for (as command buffers / CUDA graphs launch them)
    // map to their instruction by XLA's kernel name ("input_transpose_fusion.1" ->
    // "input_transpose_fusion_1", ROCm's ".kd" dropped), in that instruction's program.
    if (d.device == "/device:GPU:0") {
      const RooflineOp* by_kernel = find_op(d, "input_transpose_fusion_1.kd", 15);
      ASSERT_NE(by_kernel, nullptr);
      EXPECT_EQ(by_kernel->source, CostSource::kHlo);
      EXPECT_EQ(by_kernel->module, "jit_forward_3d_conv");
      EXPECT_NE(by_kernel->detail.find("by kernel name"), std::string::npos);
      EXPECT_EQ(*by_kernel->figures.bytes_accessed,
                *find_op(d, "input_transpose_fusion.1", 15)->figures.bytes_accessed /
                    find_op(d, "input_transpose_fusion.1", 15)->count);
    }
    // The transposes around it are data movement, not convolutions.
    const RooflineOp* transpose = find_op(d, "input_transpose_fusion", 15);
    ASSERT_NE(transpose, nullptr);
    EXPECT_EQ(transpose->category, "elementwise/fusion");
    EXPECT_EQ(*transpose->figures.flops, 0u);
  }
  EXPECT_GE(coverage(r), 0.95);
}

TEST(Roofline, ElementwiseFusionsCountXlasWay) {
  LOAD_OR_SKIP(lp, fixture("xplane/mi300x_jax_elementwise.xplane.pb"));
  RooflineResult r = compute_roofline(lp->profile, {});
  const RooflineDevice& d = r.devices.at(0);
  const uint64_t n = 8ull * 4096 * 2048;
  // jit_multiply: convert, convert, multiply, convert per element; reads x and y, writes one.
  const RooflineOp* mul = find_op(d, "loop_convert_fusion", 17);
  ASSERT_NE(mul, nullptr);
  EXPECT_EQ(mul->category, "elementwise/fusion");  // not "convolution" (the word is "convert")
  EXPECT_EQ(*mul->figures.flops, mul->count * 4 * n);
  EXPECT_EQ(*mul->figures.bytes_accessed, mul->count * 3 * n * 2);
  EXPECT_EQ(mul->figures.bound, Bound::kMemory);
  // jit_sin: the sine is a transcendental, the two converts are FLOPs.
  const RooflineOp* sin = find_op(d, "loop_convert_fusion", 13);
  ASSERT_NE(sin, nullptr);
  EXPECT_EQ(*sin->figures.flops, sin->count * 2 * n);
  EXPECT_EQ(*sin->figures.transcendentals, sin->count * n);
  EXPECT_GE(coverage(r), 0.95);
}

TEST(Roofline, TpuCostsAndPeaksComeFromTheProfile) {
  LOAD_OR_SKIP(lp, fixture("xplane/tpu_4chip_inference.xplane.pb"));
  RooflineResult r = compute_roofline(lp->profile, {});
  ASSERT_EQ(r.devices.size(), 4u);
  for (const RooflineDevice& d : r.devices) {
    SCOPED_TRACE(d.device);
    EXPECT_EQ(d.coverage.known_ps, d.coverage.total_ps);
    EXPECT_EQ(d.coverage.by_source_ps[static_cast<int>(CostSource::kProfile)], d.coverage.total_ps);
    EXPECT_EQ(d.peaks.model, "Google TPU v6e");
    ComputeType used;
    EXPECT_DOUBLE_EQ(d.peaks.flops_for(ComputeType::kVector, used), 918e12);
    EXPECT_EQ(used, ComputeType::kBf16);
    EXPECT_EQ(d.peaks.flops_source[static_cast<size_t>(ComputeType::kBf16)],
              "device stat peak_teraflops_per_second");
    EXPECT_DOUBLE_EQ(d.peaks.bytes_per_s, 1637.993152512e9);
    EXPECT_EQ(d.peaks.bytes_source, "device stat peak_hbm_bw_gigabytes_per_second");
    EXPECT_DOUBLE_EQ(d.peaks.flops_per_s[static_cast<size_t>(ComputeType::kInt8)], 1836e12);
    const RooflineOp* add = find_op(d, "broadcast_add_fusion", 12190760917235803885ull);
    ASSERT_NE(add, nullptr);
    // The stats: flops 1342177280 and bytes_accessed 10737418240 per execution.
    EXPECT_EQ(*add->figures.flops, add->count * 1342177280ull);
    EXPECT_EQ(*add->figures.bytes_accessed, add->count * 10737418240ull);
    EXPECT_EQ(add->figures.bound, Bound::kMemory);
    const RooflineOp* reduce = find_op(d, "all-reduce", 9646411105960254074ull);
    ASSERT_NE(reduce, nullptr);
    EXPECT_EQ(reduce->figures.bound, Bound::kCommunication);
    EXPECT_FALSE(reduce->figures.efficiency);
    // An asynchronous copy's issue takes nanoseconds for gigabytes: not a rate to hold to a peak.
    const RooflineOp* start = find_op(d, "copy-start", 12190760917235803885ull);
    ASSERT_NE(start, nullptr);
    EXPECT_EQ(start->figures.bound, Bound::kAsync);
    EXPECT_FALSE(start->figures.efficiency);
  }
}

TEST(Roofline, Mi300xPeaksFromTheDatasheetWithTheBandwidthStatNoted) {
  LOAD_OR_SKIP(lp, fixture("xplane/mi300x_jax_gemm.xplane.pb"));
  RooflineResult r = compute_roofline(lp->profile, {});
  const DevicePeaks& p = r.devices.at(0).peaks;
  EXPECT_EQ(p.model, "AMD Instinct MI300X");
  EXPECT_DOUBLE_EQ(p.flops_per_s[static_cast<size_t>(ComputeType::kBf16)], 1307.4e12);
  EXPECT_DOUBLE_EQ(p.bytes_per_s, 5300e9);
  ASSERT_EQ(p.notes.size(), 1u);
  EXPECT_NE(p.notes[0].find("memory_bandwidth"), std::string::npos);
  EXPECT_EQ(r.warnings.size(), 1u);

  // Flags override both; a bare number sets every compute type.
  RooflineOptions o;
  ASSERT_TRUE(parse_peak_flops("bf16=1000", o.peaks));
  o.peaks.bytes_per_s = 4e12;
  RooflineResult f = compute_roofline(lp->profile, o);
  const DevicePeaks& q = f.devices.at(0).peaks;
  EXPECT_DOUBLE_EQ(q.flops_per_s[static_cast<size_t>(ComputeType::kBf16)], 1000e12);
  EXPECT_EQ(q.flops_source[static_cast<size_t>(ComputeType::kBf16)], "flag");
  EXPECT_EQ(q.bytes_source, "flag");
  EXPECT_TRUE(q.notes.empty());
  EXPECT_DOUBLE_EQ(q.flops_per_s[static_cast<size_t>(ComputeType::kFp8)], 2614.9e12);

  PeakOverrides bad;
  EXPECT_FALSE(parse_peak_flops("bf17=3", bad));
  EXPECT_FALSE(parse_peak_flops("bf16=-3", bad));
  EXPECT_FALSE(parse_peak_flops("bf16=x", bad));
  o = {};
  o.peaks.model = "no-such-gpu";
  EXPECT_THROW(compute_roofline(lp->profile, o), InputError);
}

TEST(Roofline, V100PeaksDerivedFromClockAndCores) {
  LOAD_OR_SKIP(lp, fixture("xplane/tf_v100_8gpu_training.xplane.pb"));
  RooflineResult r = compute_roofline(lp->profile, {});
  ASSERT_FALSE(r.devices.empty());
  const DevicePeaks& p = r.devices[0].peaks;
  EXPECT_TRUE(p.model.empty());
  // 80 SMs x 1.53 GHz x 128 FP32 FLOPs per clock = 15.67 TFLOP/s (the V100 PCIe datasheet's
  // 15.7); 1024 FP16 tensor FLOPs per clock = 125 TFLOP/s.
  EXPECT_NEAR(p.flops_per_s[static_cast<size_t>(ComputeType::kFp32)], 15.667e12, 0.01e12);
  EXPECT_NEAR(p.flops_per_s[static_cast<size_t>(ComputeType::kFp16)], 125.3e12, 0.1e12);
  EXPECT_DOUBLE_EQ(p.bytes_per_s, 898048000000.0);
  EXPECT_EQ(p.bytes_source, "device stat memory_bandwidth");
  // TensorFlow's copies get their bytes from memcpy_details; its Eigen kernels stay unknown.
  bool memcpy_known = false;
  for (const RooflineDevice& d : r.devices)
    for (const RooflineOp& o : d.ops)
      if (o.source == CostSource::kMemcpy) {
        memcpy_known = true;
        EXPECT_EQ(*o.figures.flops, 0u);
        EXPECT_GT(*o.figures.bytes_accessed, 0u);
      }
  EXPECT_TRUE(memcpy_known);
}

TEST(Roofline, CpuCaptureNeedsPeaksFromFlags) {
  const LoadedProfile* lp = load(test_data("jax_cpu_matmul"));
  ASSERT_NE(lp, nullptr);
  // Every run counted. two_matmuls was compiled before the trace began: no run is warm-up, and
  // the steady state counts them all too.
  RooflineResult r = compute_roofline(lp->profile, {.steady = testing::kAllWork});
  ASSERT_EQ(r.devices.size(), 1u);
  const RooflineDevice& d = r.devices[0];
  EXPECT_EQ(d.coverage.known_ps, d.coverage.total_ps);
  EXPECT_EQ(compute_roofline(lp->profile, {}).devices[0].coverage.total_ps, d.coverage.total_ps);
  ASSERT_EQ(d.ops.size(), 2u);
  // Two jitted x @ x on the CPU: 512^3 and 256^3 multiply-adds, ten runs each.
  EXPECT_EQ(*d.ops[0].figures.flops, 10ull * 2 * 512 * 512 * 512);
  EXPECT_EQ(*d.ops[1].figures.flops, 10ull * 2 * 256 * 256 * 256);
  EXPECT_EQ(d.ops[0].compute, ComputeType::kTf32);  // f32 at DEFAULT precision
  EXPECT_FALSE(d.ops[0].figures.efficiency);        // no peaks: no bound, no efficiency
  EXPECT_EQ(d.ops[0].figures.bound, Bound::kUnknown);
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_NE(r.warnings[0].find("CPU peaks are unknown"), std::string::npos);

  RooflineOptions o;
  ASSERT_TRUE(parse_peak_flops("1", o.peaks));
  o.peaks.bytes_per_s = 50e9;
  RooflineResult f = compute_roofline(lp->profile, o);
  const RooflineOp& big = f.devices[0].ops[0];
  ASSERT_TRUE(big.figures.efficiency);
  EXPECT_EQ(big.figures.bound, Bound::kCompute);
  // Efficiency is the roofline's time over the measured time.
  EXPECT_NEAR(
      *big.figures.efficiency,
      static_cast<double>(*big.figures.predicted_ps) / static_cast<double>(big.figures.time_ps),
      1e-9);
}

TEST(Roofline, WarmupRunsLeaveTheSteadyState) {
  // global_sse compiles inside the jax_cpu_8dev capture: its first run on each device is
  // warm-up, left out of the steady state's op time and counted with all work.
  const LoadedProfile* lp = load(test_data("jax_cpu_8dev"));
  ASSERT_NE(lp, nullptr);
  RooflineResult steady = compute_roofline(lp->profile, {});
  RooflineResult all = compute_roofline(lp->profile, {.steady = testing::kAllWork});
  ASSERT_EQ(steady.devices.size(), 8u);
  ASSERT_EQ(all.devices.size(), 8u);
  for (size_t i = 0; i < 8; ++i)
    EXPECT_LT(steady.devices[i].coverage.total_ps, all.devices[i].coverage.total_ps) << i;
}

TEST(Roofline, AcceleratorTableIdentifiesFromStats) {
  DeviceFacts h100{.vendor = "Nvidia",
                   .cc_major = 9,
                   .cc_minor = 0,
                   .cores = 132,
                   .memory_bytes = 80ull << 30,
                   .gpu = true};
  ASSERT_NE(identify_accelerator(h100), nullptr);
  EXPECT_STREQ(identify_accelerator(h100)->key, "h100-sxm");
  DeviceFacts h200 = h100;
  h200.memory_bytes = 141ull << 30;
  EXPECT_STREQ(identify_accelerator(h200)->key, "h200");
  DeviceFacts mi325 = {.vendor = "AMD",
                       .cc_major = 9,
                       .cc_minor = 4,
                       .cores = 304,
                       .memory_bytes = 256ull << 30,
                       .gpu = true};
  EXPECT_STREQ(identify_accelerator(mi325)->key, "mi325x");
  DeviceFacts v5e = {.type_string = "TPU v5 lite", .tpu = true};
  EXPECT_STREQ(identify_accelerator(v5e)->key, "tpu-v5e");
  DeviceFacts unknown = {
      .vendor = "Nvidia", .cc_major = 12, .cc_minor = 0, .cores = 170, .gpu = true};
  EXPECT_EQ(identify_accelerator(unknown), nullptr);
  for (const char* key : {"h100-sxm", "h100-pcie", "h200", "a100-sxm-80gb", "l4", "mi300x",
                          "mi325x", "mi355x", "tpu-v4", "tpu-v5e", "tpu-v5p", "tpu-v6e"})
    EXPECT_NE(find_accelerator(key), nullptr) << key;
}

}  // namespace
}  // namespace jaxprof
