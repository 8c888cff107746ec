// "Is this op as fast as the hardware allows, and what bounds it?": per device, per HLO op of
// each program, the FLOPs and bytes of its executions (op_cost.h: from the profile's stats, the
// HLO, a custom call's model, a copy's size; else unknown), achieved FLOP/s and bandwidth,
// arithmetic intensity, the roofline's attainable rate at that intensity and the efficiency
// against it, what bounds the op, and the time the roofline predicts against the time measured.
// The same per program (module) and per device. docs/roofline.md gives every definition.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "jaxprof/analysis/cost/hardware_peaks.h"
#include "jaxprof/analysis/cost/op_cost.h"
#include "jaxprof/analysis/ops/event_filter.h"
#include "jaxprof/analysis/steps/steady_state.h"
#include "jaxprof/model/profile.h"

namespace jaxprof {

struct RooflineOptions {
  EventFilterSpec filter;  // device, prefix, match, min duration
  PeakOverrides peaks;
  // An op whose roofline time per execution is below this and that reaches less than half of
  // its attainable rate is latency/launch-bound: fixed costs, not FLOPs or bytes, set its time.
  int64_t latency_floor_ps = 2'000'000;  // 2 us
  size_t top = 0;                        // ops per device, by time (0 = all)
  // Ops of executions set apart (autotuning, warm-up: steady_state.h) are left out, as in `ops`.
  SteadyStateOptions steady;
};

enum class Bound : uint8_t { kCompute, kMemory, kLatency, kCommunication, kAsync, kUnknown };
// "compute", "memory", "latency", "communication", "async", "unknown"
const char* bound_name(Bound b);
inline constexpr int kBounds = 6;

// The roofline figures of a set of executions (one op, a program, a device).
struct RooflineFigures {
  int64_t time_ps = 0;  // measured: total duration of the executions
  std::optional<uint64_t> flops, bytes_accessed, transcendentals, model_flops;
  std::optional<double> flop_rate;             // FLOP/s achieved
  std::optional<double> bandwidth;             // bytes/s achieved
  std::optional<double> intensity;             // FLOPs per byte
  std::optional<double> attainable_flop_rate;  // min(peak, intensity x bandwidth peak)
  std::optional<double> efficiency;            // predicted / measured time
  std::optional<int64_t> predicted_ps;         // max(FLOPs / peak, bytes / bandwidth)
  std::optional<double> model_error;           // predicted / measured - 1
  Bound bound = Bound::kUnknown;
};

struct RooflineOp {
  std::string name;    // the HLO op, or the kernel/event name when the event names none
  std::string module;  // program (module) name
  ProgramId program_id = kNoProgram;
  std::string category;
  std::string opcode;
  uint64_t count = 0;
  int64_t self_ps = 0;
  CostSource source = CostSource::kUnknown;
  std::string detail;  // how the cost was worked out, or why it is unknown
  ComputeType compute = ComputeType::kVector;
  ComputeType peak_type = ComputeType::kVector;  // whose peak it is held to
  double peak_flops_per_s = 0;                   // 0 = unknown
  bool has_children = false;  // other ops run nested in it (counted there, not here)
  RooflineFigures figures;
};

struct RooflineProgram {
  std::string module;
  ProgramId program_id = kNoProgram;
  uint64_t ops = 0;         // op groups
  int64_t known_ps = 0;     // time of the ops with FLOPs and bytes
  RooflineFigures figures;  // time = self time of its ops; costs of the ops with known costs
};

struct RooflineCoverage {
  int64_t total_ps = 0;
  int64_t known_ps = 0;                       // ops with FLOPs and bytes, from any source
  int64_t by_source_ps[5] = {0, 0, 0, 0, 0};  // by CostSource
  uint64_t unknown_ops = 0;                   // op groups without a cost
  double share() const {
    return total_ps > 0 ? static_cast<double>(known_ps) / static_cast<double>(total_ps) : 0;
  }
};

struct RooflineDevice {
  std::string device;
  std::string host;
  DevicePeaks peaks;
  RooflineCoverage coverage;
  RooflineFigures total;        // every op of the device (nested ops counted once)
  std::vector<RooflineOp> ops;  // by time, largest first
  std::vector<RooflineProgram> programs;
};

struct RooflineResult {
  std::vector<RooflineDevice> devices;
  std::vector<std::string> warnings;
  int64_t latency_floor_ps = 0;
};

// Throws InputError for invalid filter options or an unknown --device-model.
RooflineResult compute_roofline(const Profile& profile, const RooflineOptions& options);

// Ops the roofline could not cost for want of HLO, counted for its warnings (missing_hlo.h).
struct MissingHloCounts {
  uint64_t no_hlo_ops = 0, by_kernel_name_ops = 0;
  int64_t no_hlo_ps = 0, by_kernel_name_ps = 0, total_ps = 0;
};

// compute_roofline in two halves, for hosts read one by one: one profile's devices with what
// its warnings are made of, then the result of several such parts, equal to compute_roofline of
// their profiles read as one.
struct RooflinePart {
  std::vector<RooflineDevice> devices;
  // The op devices are the CPU backend's (op_devices): among parts of which some have device
  // planes with ops, such a part's devices are none, as in a profile of all of them.
  bool cpu_backend = false;
  bool device_planes = false;                             // some op device is a /device: plane
  std::map<std::string, std::vector<std::string>> notes;  // peak note -> its devices
  MissingHloCounts missing;
};
RooflinePart compute_roofline_part(const Profile& profile, const RooflineOptions& options);
// `parts` in host order (the order a profile of them holds its hosts in).
RooflineResult merge_roofline_parts(std::vector<RooflinePart> parts,
                                    const RooflineOptions& options);

}  // namespace jaxprof
