// Known accelerators and their datasheet peaks (hardware_peaks_table.cc names the datasheet of every
// figure), and how many FLOPs a core does per clock by architecture (for devices not listed).
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

namespace jaxprof {

// Dense (no structured sparsity) figures; 0 where the device has no such unit or none is
// published. TFLOP/s (TOP/s for int8) and GB/s (10^9 bytes).
struct KnownAccelerator {
  const char* key;   // for --device-model: "h100-sxm"
  const char* name;  // "NVIDIA H100 SXM5"
  double fp64, fp32, tf32, bf16, fp16, fp8, int8;
  double hbm_gbps;
  const char* source;  // the datasheet the figures are from
};

std::span<const KnownAccelerator> known_accelerators();
const KnownAccelerator* find_accelerator(std::string_view key);

// What a device plane's stats say about the hardware (any field may be missing: 0 / empty).
struct DeviceFacts {
  std::string_view vendor;       // device_vendor: "Nvidia", "AMD"
  std::string_view type_string;  // device_type_string (TPU): "TPU v6 Lite"
  int64_t cc_major = 0, cc_minor = 0;
  int64_t cores = 0;      // core_count: SMs, CUs
  int64_t clock_khz = 0;  // clock_rate
  uint64_t memory_bytes = 0;
  bool tpu = false, gpu = false;
};

// The table entry these facts identify, or nullptr.
const KnownAccelerator* identify_accelerator(const DeviceFacts& facts);

// FLOPs per core per clock for the architecture (fp64, fp32, tf32, bf16, fp16, fp8, int8), for
// devices the table does not list; all zero when the architecture is not known.
struct PerCoreRates {
  double fp64 = 0, fp32 = 0, tf32 = 0, bf16 = 0, fp16 = 0, fp8 = 0, int8 = 0;
  const char* architecture = nullptr;
};
PerCoreRates per_core_rates(const DeviceFacts& facts);

}  // namespace jaxprof
