// The host side of one host's GPU devices, for module executions: where each kernel was launched
// (the host event with its correlation_id) and the executions of each host thread
// (`GpuExecutable::ExecuteThunks` events). A kernel belongs to the execution whose window
// contains its launch.
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

#include "jaxprof/model/column.h"
#include "jaxprof/model/profile.h"

namespace jaxprof {

class HostLaunches {
 public:
  // How launches are looked up by correlation id: a table indexed by id when the ids are dense
  // enough, else a hash map (kAuto); kHashMap always (tests compare the two).
  enum class IdLookup { kAuto, kHashMap };

  // `all`: every host line of the host, or only those that may hold ExecuteThunks events or GPU
  // API calls (cuLaunchKernel, hipModuleLaunchKernel, ...).
  // `keep_times`: also keep each launch's time, for launch_time.
  static HostLaunches index(const Profile& profile, uint32_t host, bool all,
                            IdLookup lookup = IdLookup::kAuto, bool keep_times = false);

  // Whether a launch with this correlation id was found.
  bool has_launch(int64_t correlation) const { return slot(correlation) != kNone; }
  // The execution window (an id, unique on the host) that contains the launch of the kernel with
  // this correlation id.
  std::optional<uint32_t> window_of(int64_t correlation) const;
  // When the kernel with this correlation id was launched (its launch event's start on the
  // timeline), if index kept times and found the launch.
  std::optional<int64_t> launch_time(int64_t correlation) const;

  struct Window {  // one ExecuteThunks event
    int64_t begin = 0, end = 0;
  };

 private:
  uint32_t slot(int64_t correlation) const {
    if (dense_.empty()) return sparse_slot(correlation);
    uint64_t k = static_cast<uint64_t>(correlation) - static_cast<uint64_t>(first_id_);
    return k < dense_.size() ? dense_[k] : kNone;
  }
  uint32_t sparse_slot(int64_t correlation) const;

  // One launch per correlation id (the last in line order when ids repeat), in a slot: found in
  // a table indexed by id - first_id_ when the ids are dense, as tracers count them up, else in
  // a hash map.
  int64_t first_id_ = 0;
  Column<uint32_t> dense_;  // id - first_id_ -> slot, or kNone
  std::unordered_map<int64_t, uint32_t> sparse_;
  static constexpr uint32_t kNone = UINT32_MAX;
  // Per slot: the window that contains the launch, or kNoWindow. Launch events are recorded on
  // their own lines (per OS thread id) while ExecuteThunks sits on the TraceMe line of the same
  // thread, under another id: each launch line goes with the window line that contains most of
  // its launches.
  std::vector<uint32_t> window_;
  std::vector<int64_t> time_;  // per slot, with keep_times
  static constexpr uint32_t kNoWindow = UINT32_MAX;
};

}  // namespace jaxprof
