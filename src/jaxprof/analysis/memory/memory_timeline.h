// "What fills my device memory, and when?" from the allocator events the profiler records on the
// host threads (`MemoryAllocation` / `MemoryDeallocation`, one per allocation and free, each with
// the allocator's state after it: bytes_allocated, bytes_reserved, bytes_available,
// peak_bytes_in_use, fragmentation, and what was allocated: allocation_bytes, requested_bytes,
// addr, tf_op, shape, data_type, region_type). Per allocator: bytes in use over time, the peak
// and when it happened, and what was live at the peak.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "jaxprof/model/profile.h"

namespace jaxprof {

struct MemoryTimelineOptions {
  size_t top = 10;  // groups of live allocations listed at each allocator's peak (0 = all)
  // Points kept per allocator's timeline: longer runs of events are cut into this many boxes of
  // consecutive events and each box keeps its highest point (two where bytes reserved make the
  // highest in use and the highest in use + reserved different points), so the peaks survive;
  // 0 = all.
  size_t max_points = 1000;
  std::string allocator;  // only allocators whose name or device contains this ("" = all)
};

// Live allocations at the peak that share op, shape, data type and region (and, when the
// producer recorded neither op nor shape, the JAX function that allocated them and their size).
struct LiveAllocationGroup {
  std::string op;  // tf_op ("" when the producer did not record it)
  // When op and shape are not recorded (JAX on GPU): the jitted JAX function the allocating host
  // thread was running (the innermost `PjitFunction(NAME)` event around the allocation), "" when
  // none was running.
  std::string function;
  std::string shape;   // the shape stat, as written
  std::string dtype;   // data_type as a name ("" when absent or DT_INVALID)
  std::string region;  // region_type
  uint64_t count = 0;
  uint64_t bytes = 0;            // sum of allocation_bytes
  uint64_t requested_bytes = 0;  // sum of requested_bytes
  int64_t first_allocated_ps = 0;
};

// One point of the timeline: the allocator's state after an event.
struct MemoryPoint {
  int64_t time_ps = 0;
  int64_t in_use = 0;    // bytes_allocated
  int64_t reserved = 0;  // bytes_reserved (0 when not recorded)
};

struct AllocatorMemory {
  std::string host;
  std::string allocator;     // allocator_name, or "device N" for index_on_host/device_ordinal
  std::string device;        // "GPU:0", "TPU:2", "host"; "" when the events do not say
  std::string memory_space;  // "device" or "host"; "" when unknown
  uint64_t allocations = 0;
  uint64_t deallocations = 0;
  int64_t first_ps = 0, last_ps = 0;

  // The highest bytes_allocated of the capture (the allocator's definition of in use, which its
  // own peak_bytes_in_use tracks), when the events carry it.
  std::optional<int64_t> peak_bytes_in_use;
  int64_t peak_ps = 0;       // the first event that reached it
  uint64_t peak_events = 0;  // how many events stood at it
  // The highest bytes_allocated + bytes_reserved (what XProf's memory profile calls its peak:
  // heap plus the stack reserved for programs, which differ on TPU).
  std::optional<int64_t> peak_with_reserved;
  int64_t peak_with_reserved_ps = 0;
  // The allocator's own peak_bytes_in_use at its last event: its peak since the process started.
  std::optional<int64_t> lifetime_peak_bytes_in_use;
  // Whether that lifetime peak was reached during the capture (null when either is unknown).
  std::optional<bool> peak_in_capture;
  std::optional<int64_t> capacity_bytes;  // in use + reserved + available, at the peak
  std::optional<double> fragmentation_at_peak;
  std::optional<int64_t> start_bytes_in_use, end_bytes_in_use;

  // What was live at the peak: allocations made during the capture and not freed by then,
  // grouped, largest first; the rest of the peak was allocated before the capture began.
  uint64_t live_at_peak = 0;
  uint64_t live_at_peak_bytes = 0;
  std::optional<int64_t> allocated_before_capture_bytes;
  std::vector<LiveAllocationGroup> largest_at_peak;
  uint64_t live_groups = 0;  // groups before --top

  std::vector<MemoryPoint> timeline;  // sampled (MemoryTimelineOptions::max_points)
  uint64_t timeline_events = 0;       // points before sampling
  std::vector<std::string> notes;     // missing or inconsistent stats, said plainly
};

struct MemoryTimeline {
  uint64_t events = 0;                      // allocator events read
  std::vector<AllocatorMemory> allocators;  // by host, device, allocator name
  // Set when the profile holds no allocator events: says why and how to get them.
  std::string no_events_reason;
};

// Throws InputError for bad options; otherwise never fails on odd data (it goes to notes).
MemoryTimeline compute_memory_timeline(const Profile& profile,
                                       const MemoryTimelineOptions& options);

// The timelines of several hosts' profiles read one by one (in host order), as one profile of
// them gives it: each part's times moved by its `shift_ps` onto the common clock (a host's
// base_ns less the earliest host's, in picoseconds).
MemoryTimeline merge_memory_timelines(std::vector<MemoryTimeline> parts,
                                      const std::vector<int64_t>& shift_ps);

// One allocator event with its allocator as `memory` names it: what the memory table lists.
struct AllocatorEventRecord {
  const AllocatorMemory* allocator = nullptr;  // host, allocator, device and memory_space set
  bool allocation = false;                     // else a deallocation
  int64_t time_ps = 0;
  // The allocator's state after it, and what it allocated or freed; empty when not recorded.
  std::optional<int64_t> in_use, reserved, peak_in_use, available, bytes, requested_bytes, address;
  std::optional<double> fragmentation;
  std::string op, shape, dtype, region;  // "" when not recorded
};
// Every allocator event, allocator by allocator in compute_memory_timeline's order, each
// allocator's by time, as its timeline reads them.
void for_each_allocator_event(const Profile& profile,
                              const std::function<void(const AllocatorEventRecord&)>& visit);

// The TensorFlow DataType enum value of a data_type stat as a name ("float", "bfloat16", ...);
// "" for DT_INVALID, "dtype N" for values it does not know.
std::string tf_dtype_name(int64_t value);

}  // namespace jaxprof
