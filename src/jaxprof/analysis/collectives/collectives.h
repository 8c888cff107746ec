// "What do the collectives cost": every execution of an XLA collective (all-reduce, all-gather,
// reduce-scatter, all-to-all, collective-permute, collective-broadcast; async start/done pairs
// counted once) with its replica-group size N, message size from the HLO operand shapes, time
// hidden behind compute and exposed, algorithm and bus bandwidth, and across devices the time
// spent waiting for the last device to arrive.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "jaxprof/analysis/ops/event_filter.h"
#include "jaxprof/analysis/steps/steady_state.h"
#include "jaxprof/model/collective_opcode.h"
#include "jaxprof/model/profile.h"

namespace jaxprof {

// The bandwidth convention, stated in every output: NCCL's (nccl-tests) algorithm and bus
// bandwidth. algbw = size_correction * message_bytes / time; busbw = algbw * bus_factor.
inline constexpr const char* kBandwidthConvention =
    "nccl-tests: algbw = size_correction * message_bytes / time, busbw = algbw * bus_factor; "
    "GB/s = 1e9 bytes/s";

struct CollectivesOptions {
  EventFilterSpec filter;  // only `device` is used
  size_t top = 0;          // 0 = every op
  bool instances = false;  // keep the per-instance cross-device list
  bool members = false;    // with instances: each instance's executions (cross-host analyses)
  SteadyStateOptions steady;
};

// The collective's traits that fix its bandwidth arithmetic.
struct CollectiveTraits {
  double size_correction = 1;  // all-gather: N (its operand is one of the N shards)
  double bus_factor = 1;       // all-reduce 2(N-1)/N; gather, scatter, all-to-all (N-1)/N; else 1
};
// `opcode` is the synchronous form ("all-reduce"); N <= 0 means unknown (factors of N are 1).
CollectiveTraits collective_traits(std::string_view opcode, int64_t group_size);

// One collective HLO op (per module), over all devices and executions.
struct CollectiveOp {
  std::string module;
  ProgramId program_id = kNoProgram;  // of the module: programs of one name are apart
  std::string name;                   // the HLO op that executes (the -start op of an async pair)
  std::string opcode;                 // synchronous form: all-reduce, all-gather, ...
  bool async = false;                 // start/done pair (or async-start wrapping the collective)
  int64_t group_size = 0;             // N; 0 when unknown
  bool group_size_from_devices = false;  // no replica groups in the HLO: N = devices that ran it
  uint64_t message_bytes = 0;            // operands of the (start) op; 0 when the HLO is unknown
  std::string operand_shapes;            // "f32[64], f32[16,64]"
  CollectiveTraits traits;
  uint64_t count = 0;  // executions, all devices together
  uint32_t devices = 0;
  int64_t total_ps = 0;
  int64_t min_ps = 0;
  int64_t max_ps = 0;
  double mean_ps = 0;
  int64_t exposed_ps = 0;  // not overlapped by compute ops on the same device
  int64_t hidden_ps = 0;   // total - exposed
  double algbw_gbps = 0;   // over total time: correction * bytes * count / total; 0 when unknown
  double busbw_gbps = 0;
  // Across devices: instances (one execution on every device of a replica group) and waiting.
  uint64_t instances = 0;
  uint64_t multi_device_instances = 0;  // instances that ran on at least two devices
  int64_t wait_total_ps = 0;  // sum over instances of last end - first start - fastest duration
  int64_t wait_max_ps = 0;
  std::string late_device;  // the device that started last most often
  uint64_t late_count = 0;
};

// Ops aggregated per (opcode, N, message bytes): one row per collective and size.
struct CollectiveSize {
  std::string opcode;
  int64_t group_size = 0;
  uint64_t message_bytes = 0;
  CollectiveTraits traits;
  uint32_t ops = 0;
  uint64_t count = 0;
  int64_t total_ps = 0;
  double mean_ps = 0;
  int64_t exposed_ps = 0;
  int64_t hidden_ps = 0;
  double algbw_gbps = 0;
  double busbw_gbps = 0;
  int64_t wait_total_ps = 0;
};

// One execution of an op on every device of its group, matched by (module, op, run_id or
// execution index).
struct CollectiveInstance {
  std::string module;
  std::string name;
  int64_t run_id = 0;
  bool has_run_id = false;
  uint64_t index = 0;  // the execution's index on each device (within its run_id when it has one)
  uint32_t devices = 0;
  int64_t first_start_ps = 0;
  int64_t last_end_ps = 0;
  int64_t fastest_ps = 0;
  int64_t wait_ps = 0;
  std::string late_device;  // latest start; "" for a single device
  struct Member {
    uint32_t host = 0;                 // index into the set's hosts
    uint32_t device = 0;               // index into the result's devices (name, host name)
    int64_t begin_ps = 0, end_ps = 0;  // on the timeline
    int64_t duration_ps = 0;           // on the device clock where its events carry it (op_clock.h)
  };
  std::vector<Member> members;  // with CollectivesOptions::members
};

struct CollectiveDevice {
  std::string device;
  std::string host;
  uint64_t executions = 0;
  int64_t total_ps = 0;
  int64_t exposed_ps = 0;
  uint64_t late_count = 0;  // instances where this device started last
};

struct CollectivesResult {
  std::string convention = kBandwidthConvention;
  std::vector<CollectiveOp> ops;      // by total time, descending
  size_t ops_total = 0;               // ops before --top kept the largest
  std::vector<CollectiveSize> sizes;  // by total time, descending
  std::vector<CollectiveDevice> devices;
  std::vector<CollectiveInstance> instances;  // only with options.instances; by start
  std::string most_late_device;               // over all instances with at least two devices
  uint64_t most_late_count = 0;
  uint64_t multi_device_instances = 0;
  std::vector<std::string> warnings;
};

// Throws InputError for an invalid --device regex.
CollectivesResult compute_collectives(const Profile& profile, const CollectivesOptions& options);

class PartialSet;
CollectivesResult collectives_from_partials(const PartialSet& set,
                                            const CollectivesOptions& options);

}  // namespace jaxprof
