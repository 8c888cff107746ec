// The devices of an nsys-jax archive without `thread-metadata.parquet` (the mid-2024 layout): as
// nsys-jax's loader of that time did, each thread that launched thunks drives one GPU, and within
// each program the launching threads in thread-id order are the process's local devices 0, 1, ...
// (a program run on one device is launched from the main thread, which is then local device 0).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "jaxprof/formats/nsys_jax/nsys_device_metadata.h"
#include "jaxprof/formats/nsys_jax/nsys_gpu_ranges.h"

namespace jaxprof {

struct LaunchThreadDevices {
  // (PID, TID) of each thread that ran a module with a leaf thunk -> the device's global id.
  std::map<std::pair<int64_t, int64_t>, int64_t> device;
  size_t local_devices = 0;     // distinct local ordinals
  bool ids_from_table = false;  // global ids from device-metadata.parquet (else assumed)
  size_t conflicts = 0;         // threads another program put at another ordinal (first kept)
};

// Global ids: the device table's, in order, when it lists as many GPUs as there are ordinals;
// otherwise process_index * local_devices + ordinal, as nsys-jax numbered them.
LaunchThreadDevices devices_from_launch_threads(const std::vector<NsysRange>& ranges,
                                                const std::map<int64_t, NsysDevice>& device_info,
                                                uint32_t process_index);

// The warning that says how the devices were found and which figures rest on it.
std::string launch_thread_warning(const std::string& archive, const LaunchThreadDevices& d,
                                  bool has_device_table);

}  // namespace jaxprof
