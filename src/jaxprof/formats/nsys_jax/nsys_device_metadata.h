// `device-metadata.parquet` of an nsys-jax archive: one row per CUDA device the process saw, with
// Nsight Systems' GPU description (columns named like "('TARGET_INFO_GPU', 'smCount')", a
// flattened pandas column index) and the NVTX name XLA gave the device
// ("Xla:#global=G,local=L,process=P,slice=S#"), which gives its global id.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace jaxprof {

struct NsysDevice {
  std::string name;  // "NVIDIA A100-SXM4-40GB"
  // Capabilities under the names XSpace GPU planes use for them (clock_rate in kHz,
  // memory_bandwidth in bytes/s, memory_size in bytes), present where the table has them.
  std::vector<std::pair<std::string, int64_t>> capabilities;
};

// Devices by global id. Rows without an "Xla:#global=G,...#" name are left out (no id to put
// them under). Throws InputError naming `name` for a corrupt table.
std::map<int64_t, NsysDevice> parse_device_metadata(std::string_view bytes,
                                                    const std::string& name);

}  // namespace jaxprof
