// "Where does the time go, by source line, JAX op path or module": a device's busy time as a
// weighted stack tree, ready for flamegraph renderers. Every picosecond of busy time lands in
// exactly one leaf (overlapping streams share it; see busy_share.h), so a device's frame weighs
// its busy time plus its idle frames: its span.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "jaxprof/analysis/steps/steady_state.h"
#include "jaxprof/model/flame_frame_kind.h"
#include "jaxprof/model/profile.h"

namespace jaxprof {

enum class FlameBy {
  kSource,  // Python stack frames of the op (outermost caller first), then the op
  kOpName,  // the JAX op path split at top-level '/', then the op
  kModule,  // XLA module, then the op
};

const char* flame_by_name(FlameBy by);
// Accepts source, op-name, module.
bool parse_flame_by(std::string_view text, FlameBy& out);

// What kind of thing a frame is (renderers colour by it).

struct FlameOptions {
  FlameBy by = FlameBy::kSource;
  std::string device;  // plane name substring, or re:REGEX (as for ops)
  // Idle frames, so that a device's frame weighs its span: "[idle during modules]" and
  // "[idle between modules]" from its module executions, or "[idle]" when those are unknown.
  // Off by default: idle is often most of a span and would crowd out the ops (`flame --idle`).
  bool idle = false;
  // Executions set apart from the steady state leave no frames; with `idle`, the time set apart
  // is one "[set apart]" frame (steady_state.h).
  SteadyStateOptions steady;
  // flame_from_partials only: every device's stacks in one tree, as merge_flame_devices makes it
  // (the root named "all"), built as the devices come rather than kept apart first.
  bool merge_devices = false;
};

struct FlameNode {
  std::string name;
  FrameKind kind = FrameKind::kRoot;
  int64_t total_ps = 0;  // self plus children
  int64_t self_ps = 0;   // weight of the stack ending here
  uint32_t parent = 0;
  uint32_t depth = 0;
  std::vector<uint32_t> children;  // by total descending, then name
  uint32_t module = 0;             // module frames: index into Profile::modules
};

struct FlameDevice {
  std::string device;
  std::string host;
  uint32_t node = 0;         // its frame in FlameTree::nodes
  uint32_t op_device = 0;    // index into op_devices() (compute_flame)
  int64_t busy_ps = 0;       // union of its op intervals (= the weight under its op frames)
  int64_t span_ps = 0;       // first op start to last op end
  uint64_t events = 0;       // op events
  bool has_idle = false;     // idle frames present (then its frame weighs span_ps)
  bool has_modules = false;  // module executions known: idle is split during / between
  int64_t idle_during_modules_ps = 0;   // inside a module execution, no op running
  int64_t idle_between_modules_ps = 0;  // outside every module execution (all idle when
                                        // executions are unknown)
  int64_t set_apart_ps = 0;             // with idle frames: time set apart, less busy time
};

struct FlameTree {
  FlameBy by = FlameBy::kSource;
  std::vector<FlameNode> nodes;  // [0] is the root ("all"), its children the devices
  std::vector<FlameDevice> devices;
  std::vector<std::string> warnings;

  // Frame names from the root's child (the device) down to `node`.
  std::vector<std::string_view> stack(uint32_t node) const;
};

// The JAX op path split into frames at the slashes that are not inside (), [] or {}:
// "jit(f)/(transpose(jvp()))/dot_general" -> "jit(f)", "(transpose(jvp()))", "dot_general".
// Empty parts are dropped.
std::vector<std::string_view> split_op_path(std::string_view op_name);
// XLA joins the op names of instructions it merged with ';' ("jit(f)/mul;jit(f)/add"): the
// names, split at the ';' that are not inside brackets.
std::vector<std::string_view> split_op_names(std::string_view op_name);

// Throws InputError for an invalid --device regex.
FlameTree compute_flame(const Profile& profile, const FlameOptions& options);

}  // namespace jaxprof
