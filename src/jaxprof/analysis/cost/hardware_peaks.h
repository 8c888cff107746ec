// Hardware peaks per device: FLOP/s per compute type and memory bandwidth, each with the source
// it came from. In order of precedence:
//   1. flags (PeakOverrides), for every figure they give;
//   2. the device plane's own peak stats (TPU: peak_teraflops_per_second,
//      peak_hbm_bw_gigabytes_per_second);
//   3. the table of known accelerators (hardware_peaks_table.cc, every figure with its datasheet), for a
//      device identified from its plane's stats (TPU device_type_string; GPU vendor, compute
//      capability, core count, memory size and clock);
//   4. figures derived from the plane's stats: clock_rate x core_count x the architecture's
//      FLOPs per core per clock, and the memory_bandwidth stat.
// A GPU's memory_bandwidth stat is used over the table when they agree within 15%; when they
// disagree (ROCm reports half of MI300X's HBM3 bandwidth) the table wins and a note says so.
// Whatever none of these give stays unknown (0): the CPU backend has no peaks unless flags give
// them.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "jaxprof/analysis/cost/op_cost.h"
#include "jaxprof/model/profile.h"

namespace jaxprof {

inline constexpr size_t kComputeTypes = 8;  // ComputeType values

struct DevicePeaks {
  std::string model;  // the identified accelerator ("NVIDIA H100 SXM5"), empty when unknown
  std::array<double, kComputeTypes> flops_per_s{};  // by ComputeType; 0 = unknown
  std::array<std::string, kComputeTypes> flops_source{};
  double bytes_per_s = 0;  // HBM (device memory) bandwidth; 0 = unknown
  std::string bytes_source;
  std::vector<std::string> notes;

  // The peak an op of this compute type is held to, falling back along tf32 -> fp32 -> vector,
  // fp16 <-> bf16, fp8/int8 -> bf16, and finally to the device's headline (bf16) figure; `used`
  // says which figure it was. 0 when the device has none.
  double flops_for(ComputeType type, ComputeType& used) const;
};

// Flags: FLOP/s by compute type and bandwidth in bytes/s (0 = not given), or a table entry
// chosen by its key ("h100-sxm", "mi300x", "tpu-v5e", ...).
struct PeakOverrides {
  std::array<double, kComputeTypes> flops_per_s{};
  double bytes_per_s = 0;
  std::string model;
};

// Throws InputError for an unknown --device-model key.
DevicePeaks device_peaks(const Profile& profile, uint32_t plane, const PeakOverrides& overrides);

// The keys the table knows, for --help and error messages.
std::vector<std::string> known_device_models();

// Parses "bf16=989" (TFLOP/s) into overrides; false for an unknown type or a bad number.
bool parse_peak_flops(std::string_view text, PeakOverrides& out);
bool parse_compute_type(std::string_view name, ComputeType& out);

}  // namespace jaxprof
