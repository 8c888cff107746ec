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
  static HostLaunches index(const Profile& profile, uint32_t host, bool all,
                            IdLookup lookup = IdLookup::kAuto);

  // Whether a launch with this correlation id was found.
  bool has_launch(int64_t correlation) const { return find(correlation) != nullptr; }
  // The execution window (an id, unique on the host) that contains the launch of the kernel with
  // this correlation id.
  std::optional<uint32_t> window_of(int64_t correlation) const;

  struct Launch {
    uint32_t line = 0;
    int64_t time = 0;
  };
  struct Window {  // one ExecuteThunks event
    int64_t begin = 0, end = 0;
  };

 private:
  const Launch* find(int64_t correlation) const;
  std::optional<uint32_t> containing(const std::vector<uint32_t>& ids, int64_t time) const;

  // One launch per correlation id (the last in line order when ids repeat). Ids are looked up in
  // a table indexed by id - first_id_ when they are dense, as tracers count them up, else in a
  // hash map.
  Column<Launch> launches_;
  int64_t first_id_ = 0;
  Column<uint32_t> dense_;  // id - first_id_ -> index into launches_, or kNone
  std::unordered_map<int64_t, uint32_t> sparse_;
  static constexpr uint32_t kNone = UINT32_MAX;

  std::vector<Window> windows_;                                  // global window ids
  std::unordered_map<uint32_t, std::vector<uint32_t>> by_line_;  // window line -> ids, by begin
  // Launch events are recorded on their own lines (per OS thread id) while ExecuteThunks sits on
  // the TraceMe line of the same thread, under another id: pair them by containment.
  std::unordered_map<uint32_t, uint32_t> window_line_of_;
};

}  // namespace jaxprof
