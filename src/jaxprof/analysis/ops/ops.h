// "Which ops take the time": device op events grouped by HLO op, kernel, module, name, category
// or HLO opcode, with count, total, self time, mean, min, max, standard deviation and share of the
// device's busy time.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "jaxprof/analysis/ops/event_filter.h"
#include "jaxprof/analysis/ops/op_clock.h"
#include "jaxprof/analysis/steps/steady_state.h"
#include "jaxprof/model/profile.h"
#include "jaxprof/model/share_guard.h"

namespace jaxprof {

enum class GroupBy { kHloOp, kKernel, kModule, kName, kCategory, kOpcode };

const char* group_by_name(GroupBy g);
// Accepts hlo-op, kernel, module, name, category, opcode. Returns false for anything else.
bool parse_group_by(std::string_view text, GroupBy& out);

// The group name of ops whose opcode the HLO index does not know (--group-by opcode).
inline constexpr const char* kUnknownOpcode = "(unknown)";

struct OpsOptions {
  GroupBy group_by = GroupBy::kHloOp;
  EventFilterSpec filter;
  size_t top = 0;  // 0 = all groups
  // hlo-op grouping: one group per program rather than per module name. Programs that share a
  // module name (a function jitted for several shapes) are merged by default: their ops are
  // the same code, and one row per op reads best; split, each row is one program's.
  bool by_program = false;
  SteadyStateOptions steady;  // what counts besides steady-state executions
};

struct OpGroup {
  std::string name;
  std::string module;  // hlo-op and module grouping
  // module grouping; hlo-op grouping when the group holds one program (always --by-program)
  ProgramId program_id = kNoProgram;
  std::vector<ProgramId> program_ids;  // hlo-op grouping: the programs merged into the group
  uint64_t count = 0;
  int64_t total_ps = 0;
  int64_t self_ps = 0;
  int64_t min_ps = 0;
  int64_t max_ps = 0;
  double mean_ps = 0;
  double std_ps = 0;  // population standard deviation of durations
  double share = 0;   // self / device busy
  // hlo-op grouping, from the HLO index (or event stats when the index lacks the op)
  std::string opcode;
  std::string op_name;  // JAX op path
  std::string source;   // file:line
  std::string category;
};

struct DeviceOps {
  std::string device;
  std::string host;
  int64_t busy_ps = 0;
  int64_t span_ps = 0;
  uint64_t events = 0;     // op events on the device, set-apart ones left out
  uint64_t set_apart = 0;  // op events of executions set apart (steady_state.h)
  uint64_t selected = 0;   // events that passed the filters
  // Events whose durations (and self times) come from the device's own clock; the others use
  // the timeline's (host-aligned) clock. busy_ps and span_ps are always on the timeline clock.
  uint64_t device_clock_events = 0;
  std::vector<OpGroup> groups;
  size_t groups_total = 0;  // groups before --top kept the largest
  ShareGuard shares;        // groups whose self time exceeds the busy time (share shown as 1)
};

struct OpsResult {
  GroupBy group_by = GroupBy::kHloOp;
  std::vector<DeviceOps> devices;
  std::vector<std::string> warnings;
};

// Throws InputError for invalid filter options.
OpsResult compute_ops(const Profile& profile, const OpsOptions& options);

class PartialSet;
// The same from hosts' partials: the device, prefix and match filters apply; min_duration and
// max_events need the events (compute_ops applies them while extracting).
OpsResult ops_from_partials(const PartialSet& set, const OpsOptions& options);
// The same, one device at a time, in the order ops_from_partials lists them (without its
// warnings): a caller that reduces the devices (summary) never holds them all.
void for_each_device_ops(const PartialSet& set, const OpsOptions& options,
                         const std::function<void(DeviceOps&&)>& sink);

}  // namespace jaxprof
