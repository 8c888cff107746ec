#include "jaxprof/formats/nsys_jax/nsys_launch_threads.h"

#include <algorithm>
#include <set>
#include <string_view>

namespace jaxprof {

LaunchThreadDevices devices_from_launch_threads(const std::vector<NsysRange>& ranges,
                                                const std::map<int64_t, NsysDevice>& device_info,
                                                uint32_t process_index) {
  using Thread = std::pair<int64_t, int64_t>;
  // The launching threads of each program (by the module range's "program_id=" text; modules
  // without one, autotuning's, form one group as in nsys-jax).
  std::map<std::string_view, std::set<Thread>> threads_of_program;
  for (const NsysRange& r : ranges) {
    if (r.kind != NsysRangeKind::kThunk || r.module < 0 || r.has_child_thunk) continue;
    const NsysRange& mod = ranges[r.module];
    threads_of_program[nvtx_field(mod.name, "program_id=")].insert({mod.pid, mod.tid});
  }
  LaunchThreadDevices out;
  std::map<Thread, size_t> ordinal;
  for (const auto& [program, threads] : threads_of_program) {
    size_t k = 0;
    for (const Thread& t : threads) {
      auto [it, added] = ordinal.try_emplace(t, k);
      if (!added && it->second != k) ++out.conflicts;
      out.local_devices = std::max(out.local_devices, it->second + 1);
      ++k;
    }
  }
  std::vector<int64_t> ids;
  if (device_info.size() == out.local_devices) {
    out.ids_from_table = true;
    for (const auto& [id, info] : device_info) ids.push_back(id);
  } else {
    for (size_t k = 0; k < out.local_devices; ++k)
      ids.push_back(static_cast<int64_t>(process_index * out.local_devices + k));
  }
  for (const auto& [thread, k] : ordinal) out.device[thread] = ids[k];
  return out;
}

std::string launch_thread_warning(const std::string& archive, const LaunchThreadDevices& d,
                                  bool has_device_table) {
  std::string ids;
  std::set<int64_t> seen;
  for (const auto& [thread, id] : d.device)
    if (seen.insert(id).second) ids += (ids.empty() ? "" : ", ") + std::to_string(id);
  std::string w = archive + ": no member thread-metadata.parquet (the older nsys-jax layout): " +
                  std::to_string(d.local_devices) + " GPU(s) taken from the " +
                  std::to_string(d.device.size()) +
                  " thread(s) that launched thunks, in thread-id order, as nsys-jax's loader "
                  "did; global ids " + ids;
  w += d.ids_from_table ? " from device-metadata.parquet"
                        : " assumed (process index x GPUs + local index)";
  if (!has_device_table) w += "; GPU names and capabilities unknown (info, roofline peaks)";
  if (d.conflicts)
    w += "; " + std::to_string(d.conflicts) +
         " thread(s) launched at different positions in different programs (the first kept)";
  return w;
}

}  // namespace jaxprof
