// The GPU-projected NVTX ranges of one nsys-jax process (`nvtx_gpu_proj_trace/trace.parquet`),
// XLA's module and thunk ranges among them, each thunk tied to the module it runs in; and the
// process's thread metadata (`thread-metadata.parquet`), whose XlaLauncher threads say which
// device each thread drives.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "jaxprof/io/parquet.h"
#include "jaxprof/io/zip.h"

namespace jaxprof {

// The value of `key=` inside "...#key=value,other=...#": up to the next ',' or '#'.
std::string_view nvtx_field(std::string_view text, std::string_view key);

// All of `s` as a decimal integer; false when it is not one.
bool parse_nvtx_int(std::string_view s, int64_t& out);

enum class NsysRangeKind : uint8_t { kOther, kModule, kThunk };

struct NsysRange {
  int64_t start_ns = 0, duration_ns = 0;
  int64_t range_id = 0;
  int64_t pid = 0, tid = 0;
  int32_t parent = -1;  // row of the parent range
  bool has_parent = false;
  int32_t module = -1;  // for thunks: row of the enclosing module
  NsysRangeKind kind = NsysRangeKind::kOther;
  bool has_child_thunk = false;
  bool used = false;  // a module with at least one leaf thunk
  std::string_view name;
};

// A process's trace member read into ranges, with what their names point into.
struct NsysGpuTrace {
  std::vector<uint8_t> storage;
  ParquetColumn names;       // the ranges' names are views into it or into `storage`
  std::string file;          // the member, for messages
  std::string thunk_prefix;  // "TSL:Thunk:" in the older layout, "Thunk:" in the newer
  std::vector<NsysRange> ranges;
  size_t orphans = 0;  // thunks outside any module range (the profile started mid-module)
};

// Reads the trace member into `t`, which must be fresh (the ranges point into it, so it is filled
// in place). Throws InputError naming the member.
void read_gpu_trace(const ZipArchive& zip, const ZipEntry& entry, NsysGpuTrace& t);

struct NsysThreads {
  std::map<std::pair<int64_t, int64_t>, std::string> names;  // (PID, TID) -> thread name
  // XlaLauncher threads, one per device: (PID, TID) -> the device's global id.
  std::map<std::pair<int64_t, int64_t>, int64_t> launcher_device;
  int64_t first_launcher_device = -1;  // the first listed launcher's device, -1 if none
};

// Reads the thread-metadata member. Throws InputError naming it.
NsysThreads read_thread_metadata(const ZipArchive& zip, const ZipEntry& entry);

}  // namespace jaxprof
