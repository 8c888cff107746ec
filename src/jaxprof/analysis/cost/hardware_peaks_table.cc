#include "jaxprof/analysis/cost/hardware_peaks_table.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <string>

namespace jaxprof {
namespace {

// Dense figures: datasheets that quote "with sparsity" give twice the dense rate, halved here.
// Columns: fp64, fp32, tf32, bf16, fp16, fp8, int8 (TFLOP/s, TOP/s), HBM GB/s.
constexpr std::array<KnownAccelerator, 14> kTable = {{
    // NVIDIA H100 Tensor Core GPU datasheet (SXM5 column): FP64 Tensor Core 67, FP32 67,
    // TF32 989* / BF16 1979* / FP16 1979* / FP8 3958* / INT8 3958* (*with sparsity), HBM3
    // 3.35 TB/s.
    {"h100-sxm", "NVIDIA H100 SXM5", 66.9, 66.9, 494.7, 989.4, 989.4, 1978.9, 1978.9, 3350,
     "NVIDIA H100 Tensor Core GPU datasheet, SXM5"},
    // Same datasheet, PCIe column: FP64 Tensor Core 51, FP32 51, TF32 756*, BF16 1513*,
    // FP16 1513*, FP8 3026*, INT8 3026*, HBM2e 2 TB/s.
    {"h100-pcie", "NVIDIA H100 PCIe", 51.2, 51.2, 378, 756.5, 756.5, 1513, 1513, 2000,
     "NVIDIA H100 Tensor Core GPU datasheet, PCIe"},
    // NVIDIA H200 Tensor Core GPU datasheet (SXM): FP64 Tensor Core 67, FP32 67, TF32 989*,
    // BF16 1979*, FP16 1979*, FP8 3958*, INT8 3958*, HBM3e 4.8 TB/s, 141 GB.
    {"h200", "NVIDIA H200 SXM", 66.9, 66.9, 494.7, 989.4, 989.4, 1978.9, 1978.9, 4800,
     "NVIDIA H200 Tensor Core GPU datasheet, SXM"},
    // NVIDIA A100 Tensor Core GPU datasheet: FP64 Tensor Core 19.5, FP32 19.5, TF32 156,
    // BF16 312, FP16 312, INT8 624 (dense); 80GB SXM 2,039 GB/s, 80GB PCIe 1,935 GB/s,
    // 40GB 1,555 GB/s.
    {"a100-sxm-80gb", "NVIDIA A100 80GB SXM", 19.5, 19.5, 156, 312, 312, 0, 624, 2039,
     "NVIDIA A100 Tensor Core GPU datasheet, 80GB SXM"},
    {"a100-pcie-80gb", "NVIDIA A100 80GB PCIe", 19.5, 19.5, 156, 312, 312, 0, 624, 1935,
     "NVIDIA A100 Tensor Core GPU datasheet, 80GB PCIe"},
    {"a100-40gb", "NVIDIA A100 40GB", 19.5, 19.5, 156, 312, 312, 0, 624, 1555,
     "NVIDIA A100 Tensor Core GPU datasheet, 40GB"},
    // NVIDIA L4 Tensor Core GPU datasheet: FP32 30.3, TF32 120*, BF16 242*, FP16 242*,
    // FP8 485*, INT8 485*, 300 GB/s.
    {"l4", "NVIDIA L4", 0, 30.3, 60, 121, 121, 242.5, 242.5, 300,
     "NVIDIA L4 Tensor Core GPU datasheet"},
    // AMD Instinct MI300X data sheet: FP64 matrix 163.4, FP32 163.4, TF32 653.7, FP16 1307.4,
    // BF16 1307.4, FP8 2614.9, INT8 2614.9 (dense), HBM3 5.3 TB/s, 192 GB.
    {"mi300x", "AMD Instinct MI300X", 163.4, 163.4, 653.7, 1307.4, 1307.4, 2614.9, 2614.9, 5300,
     "AMD Instinct MI300X data sheet"},
    // AMD Instinct MI325X data sheet: compute as MI300X, HBM3E 6 TB/s, 256 GB.
    {"mi325x", "AMD Instinct MI325X", 163.4, 163.4, 653.7, 1307.4, 1307.4, 2614.9, 2614.9, 6000,
     "AMD Instinct MI325X data sheet"},
    // AMD Instinct MI355X data sheet: FP64 vector 78.6, FP32 157.3, FP16 2.5 PF, BF16 2.5 PF,
    // FP8 5 PF, INT8 5 POPS (dense), no TF32, HBM3E 8 TB/s, 288 GB.
    {"mi355x", "AMD Instinct MI355X", 78.6, 157.3, 0, 2516.6, 2516.6, 5033.2, 5033.2, 8000,
     "AMD Instinct MI355X data sheet"},
    // Google Cloud TPU documentation, "TPU v4": 275 TFLOPS bf16 and int8 per chip, 1,200 GB/s.
    {"tpu-v4", "Google TPU v4", 0, 0, 0, 275, 0, 0, 275, 1200, "Google Cloud TPU v4 documentation"},
    // Google Cloud TPU documentation, "TPU v5e": 197 TFLOPS bf16, 394 TOPS int8, 819 GB/s.
    {"tpu-v5e", "Google TPU v5e", 0, 0, 0, 197, 0, 0, 394, 819,
     "Google Cloud TPU v5e documentation"},
    // Google Cloud TPU documentation, "TPU v5p": 459 TFLOPS bf16, 918 TOPS int8, 2,765 GB/s.
    {"tpu-v5p", "Google TPU v5p", 0, 0, 0, 459, 0, 0, 918, 2765,
     "Google Cloud TPU v5p documentation"},
    // Google Cloud TPU documentation, "TPU v6e" (Trillium): 918 TFLOPS bf16, 1,836 TOPS int8,
    // 1,640 GB/s.
    {"tpu-v6e", "Google TPU v6e", 0, 0, 0, 918, 0, 0, 1836, 1640,
     "Google Cloud TPU v6e documentation"},
}};

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

constexpr uint64_t kGiB = uint64_t{1} << 30;

}  // namespace

std::span<const KnownAccelerator> known_accelerators() { return kTable; }

const KnownAccelerator* find_accelerator(std::string_view key) {
  for (const KnownAccelerator& a : kTable)
    if (key == a.key) return &a;
  return nullptr;
}

const KnownAccelerator* identify_accelerator(const DeviceFacts& f) {
  if (f.tpu) {
    const std::string t = lower(f.type_string);
    if (t.find("v6") != std::string::npos) return find_accelerator("tpu-v6e");
    if (t.find("v5") != std::string::npos)
      return find_accelerator(
          t.find("lite") != std::string::npos || t.find("v5e") != std::string::npos ? "tpu-v5e"
                                                                                    : "tpu-v5p");
    if (t.find("v4") != std::string::npos) return find_accelerator("tpu-v4");
    return nullptr;
  }
  if (!f.gpu) return nullptr;
  const std::string vendor = lower(f.vendor);
  const bool amd = vendor.find("amd") != std::string::npos;
  const uint64_t mem = f.memory_bytes;
  if (amd) {
    if (f.cc_major == 9 && f.cc_minor == 4 && f.cores == 304)
      return find_accelerator(mem > 220 * kGiB ? "mi325x" : "mi300x");
    // MI350X has the same CUs at a lower clock (2.2 GHz): not in the table.
    if (f.cc_major == 9 && f.cc_minor == 5 && f.cores == 256 && f.clock_khz >= 2'350'000)
      return find_accelerator("mi355x");
    return nullptr;
  }
  if (f.cc_major == 9 && f.cc_minor == 0) {
    if (f.cores == 132) return find_accelerator(mem > 100 * kGiB ? "h200" : "h100-sxm");
    if (f.cores == 114) return find_accelerator("h100-pcie");
  }
  if (f.cc_major == 8 && f.cc_minor == 0 && f.cores == 108)
    return find_accelerator(mem > 60 * kGiB ? "a100-sxm-80gb" : "a100-40gb");
  if (f.cc_major == 8 && f.cc_minor == 9 && f.cores == 58) return find_accelerator("l4");
  return nullptr;
}

// FLOPs per SM (CU) per clock, dense: NVIDIA's CUDA C++ Programming Guide (arithmetic
// instruction throughput per SM: FP32 FMAs, FP64 FMAs) and the tensor-core rates implied by the
// datasheets above divided by SMs x boost clock (V100: 125 TFLOPS FP16 over 80 SMs at 1.53 GHz
// = 1024; A100: 312 over 108 at 1.41 = 2048; L4: 121 over 58 at 2.04 = 1024; H100 SXM: 989.4
// over 132 at 1.83 = 4096). AMD: the CDNA 3 and CDNA 4 instruction set and white papers (MI300X:
// 1307.4 TFLOPS BF16 over 304 CUs at 2.1 GHz = 2048; MI355X: 2516.6 over 256 at 2.4 = 4096).
PerCoreRates per_core_rates(const DeviceFacts& f) {
  PerCoreRates r;
  if (!f.gpu) return r;
  const bool amd = lower(f.vendor).find("amd") != std::string::npos;
  if (amd) {
    if (f.cc_major == 9 && f.cc_minor == 4) {
      r = {256, 256, 1024, 2048, 2048, 4096, 4096, "CDNA 3 (gfx942)"};
    } else if (f.cc_major == 9 && f.cc_minor == 5) {
      r = {128, 256, 0, 4096, 4096, 8192, 8192, "CDNA 4 (gfx950)"};
    }
    return r;
  }
  const int64_t cc = f.cc_major * 10 + f.cc_minor;
  if (cc == 70) {
    r = {64, 128, 0, 0, 1024, 0, 0, "Volta (sm_70)"};
  } else if (cc == 75) {
    r = {4, 128, 0, 0, 512, 0, 1024, "Turing (sm_75)"};
  } else if (cc == 80) {
    r = {64, 128, 1024, 2048, 2048, 0, 4096, "Ampere (sm_80)"};
  } else if (cc == 86 || cc == 87) {
    r = {4, 256, 512, 1024, 1024, 0, 2048, "Ampere (sm_86)"};
  } else if (cc == 89) {
    r = {4, 256, 512, 1024, 1024, 2048, 2048, "Ada (sm_89)"};
  } else if (cc == 90) {
    r = {128, 256, 2048, 4096, 4096, 8192, 8192, "Hopper (sm_90)"};
  }
  return r;
}

}  // namespace jaxprof
