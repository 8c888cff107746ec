// The `kernel_details` stat of GPU kernel events: launch configuration and resources, as text.
// Producers differ:
//   XLA/CUPTI (NVIDIA): "regs:32 static_shared:0 dynamic_shared:0 grid:4,1,1 block:128,1,1
//   occ_pct:50" older TensorFlow:   "regs:38 shm:0 grid:160,1,1 block:1024,1,1" ROCm (AMD): "
//   grid:4096,1,1 block:256,1,1 private_mem:0 group_mem:0 occ_pct:0"
// Unknown keys are ignored, so new producer fields do not break parsing.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace jaxprof {

struct KernelDetails {
  std::optional<std::array<int64_t, 3>> grid;   // blocks per grid, x y z
  std::optional<std::array<int64_t, 3>> block;  // threads per block, x y z
  std::optional<int64_t> registers;             // per thread (regs)
  std::optional<int64_t> static_shared;         // bytes per block (static_shared)
  std::optional<int64_t> dynamic_shared;        // bytes per block (dynamic_shared)
  std::optional<int64_t> shared;                // bytes per block: shm, or AMD group_mem (LDS)
  std::optional<int64_t> private_mem;           // AMD scratch bytes per work item
  std::optional<double> occupancy_pct;          // occ_pct

  // Shared memory per block however the producer states it: static + dynamic, else shm/group_mem.
  std::optional<int64_t> shared_bytes() const;
  bool operator==(const KernelDetails&) const = default;
};

// Parses the stat text; fields that are absent or malformed stay empty.
KernelDetails parse_kernel_details(std::string_view text);

// "4096,1,1" for a grid or block.
std::string dim3_string(const std::array<int64_t, 3>& d);

}  // namespace jaxprof
