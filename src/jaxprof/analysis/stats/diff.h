// "Did my change make it slower, and where": two profiles of the same program compared per XLA
// module, per HLO op (ops renamed by a new compilation matched by opcode, JAX op path and source
// line) and per op category within a module, each with a test of whether the change is beyond
// the run-to-run noise of the per-execution samples.
//
// Times are per execution of the op's module (steady-state executions, warm-up runs left out).
// Each row's change is the estimate of NEW / BASE that goes with its test, with the interval the
// test supports (effect.h). Contributions are accounting, not a test: the change of the mean time
// per execution, weighted by how often each module runs per device in BASE, so that they add up
// to the change in the device time of one BASE-sized run of the whole profile.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "jaxprof/analysis/steps/steady_state.h"
#include "jaxprof/analysis/steps/step_samples.h"
#include "jaxprof/model/profile.h"

namespace jaxprof {

// Per-execution samples of one profile, the input of diff and check.
struct OpSamples {
  std::string name;  // hlo_op (or event name)
  std::string opcode, op_name, source, category;
  uint64_t events = 0;
  int64_t total_ps = 0;          // over steady executions
  std::vector<double> per_exec;  // summed duration in each steady execution (0 when absent)
};

struct ModuleSamples {
  std::string name;
  uint64_t devices = 0;
  uint64_t warmup_executions = 0;
  int64_t total_ps = 0;          // steady executions
  std::vector<double> per_exec;  // steady execution durations (all devices)
  std::vector<OpSamples> ops;    // by name
  // Executions of `per_exec` per capture, in order (one entry per capture pooled, 0 where the
  // module did not run); the ops' per_exec follow the same layout.
  std::vector<size_t> captures;
  double runs_per_device() const {
    return devices ? static_cast<double>(per_exec.size()) / static_cast<double>(devices) : 0;
  }
};

struct ProfileSamples {
  std::vector<ModuleSamples> modules;  // by name
  std::vector<std::string> warnings;
  size_t captures = 1;  // profiles pooled (separate processes or runs)
  StepSamples steps;    // wall time of the marked training steps
  const ModuleSamples* find(std::string_view module) const;
};

// Modules are keyed by name (a program compiled again gets a new program id); programs that
// share a name are merged, with a warning. Steps come from step_samples.h. Executions of XLA's
// autotuner are left out unless `steady.include_autotuning` (steady_state.h); warm-up runs are
// kept apart whatever the options.
ProfileSamples collect_samples(const Profile& profile, const SteadyStateOptions& steady = {});
class PartialSet;
ProfileSamples samples_from_partials(const PartialSet& set, const SteadyStateOptions& steady = {});

// Several captures of one program (separate processes) as one set of samples: executions are
// concatenated capture after capture, ops missing from a capture count 0 in its executions, and
// devices add up (so runs_per_device is the mean per capture).
ProfileSamples pool_samples(std::vector<ProfileSamples> captures);

// slower / faster: the test rejects "no change" (p < alpha) and the estimate moved by at least
// min_change; same: otherwise, when the interval lies within 1 -/+ min_change; unclear: otherwise
// (the interval is too wide to tell whether it changed by min_change).
enum class Change : uint8_t { kSame, kSlower, kFaster, kAdded, kRemoved, kUnclear };
const char* change_name(Change c);

// One compared quantity (module, op, or category within a module).
struct DiffRow {
  std::string module;
  std::string name;        // module name, op name in BASE (NEW when added), or category
  std::string new_name;    // ops: the name in NEW when it was renamed
  std::string matched_by;  // ops: "name", "opcode+op_name+source", "opcode+op_name"
  std::string opcode, op_name, source, category;
  uint64_t base_executions = 0, new_executions = 0;
  int64_t base_total_ps = 0, new_total_ps = 0;  // over steady executions
  double base_mean_ps = 0, new_mean_ps = 0;     // per execution
  double base_median_ps = 0, new_median_ps = 0;
  double delta_ps = 0;  // new_mean - base_mean
  // The tested estimate of NEW / BASE (effect.h: Hodges-Lehmann ratio, or the ratio of the
  // geometric means of the capture medians) and its interval at level 1 - alpha (0 and +inf
  // where unbounded); none for added or removed, or when both sides are all zero.
  std::optional<double> ratio;
  double ratio_low = 0, ratio_high = 0;
  double weight = 0;              // module runs per device (BASE, else NEW)
  double contribution_ps = 0;     // delta * weight
  std::optional<double> p_value;  // two-sided; none for added or removed
  // "mann-whitney" over executions (one capture per side), or "capture-t": Welch's t-test over
  // per-capture medians (several captures on a side); see welch_t_test.h.
  const char* test = "";
  size_t base_captures = 0, new_captures = 0;  // captures with executions
  double shift_ps = 0;                         // Hodges-Lehmann estimate of new - base
  bool significant = false;                    // p < alpha and |ratio - 1| >= min_change
  Change change = Change::kSame;
  // ops: running sum of |contribution| / the sum over all ops (the gross change): at most 1.
  double cumulative_share = 0;
};

struct DiffOptions {
  double alpha = 0.01;       // significance level of the two-sided test
  double min_change = 0.02;  // smallest relative change reported as a change
  size_t top = 10;           // differences counted in `explained`
};

// Signed op contributions, added up apart: what the slower ops add and the faster ones remove.
struct Contributions {
  double slower_ps = 0;  // sum of the positive contributions
  double faster_ps = 0;  // sum of the negative ones (<= 0)
  double net_ps() const { return slower_ps + faster_ps; }
  double gross_ps() const { return slower_ps - faster_ps; }
};

struct DiffResult {
  double alpha = 0, min_change = 0;
  size_t base_captures = 1, new_captures = 1;
  double base_total_ps = 0, new_total_ps = 0;  // weighted module time: one BASE-sized run
  double delta_ps = 0;
  Contributions ops_change;  // over all ops
  size_t explained_top = 0;
  Contributions explained;  // over the top ops
  // Gross change of the top ops / of all ops, in [0, 1]; none when no op changed.
  std::optional<double> explained_share;
  std::vector<DiffRow> modules;     // by |contribution| descending
  std::vector<DiffRow> ops;         // by |contribution| descending
  std::vector<DiffRow> categories;  // per (module, category), by |contribution| descending
  // The wall time per marked step (name = the marks' name, executions = steps; no weight or
  // contribution), when both sides' step marks are usable; else why not.
  std::optional<DiffRow> step;
  std::string step_unavailable;
  std::vector<std::string> warnings;
};

DiffResult compute_diff(const ProfileSamples& base, const ProfileSamples& now,
                        const DiffOptions& options = {});

// Pairs of op indices (base, new) of one module, plus how each pair was matched; ops of either
// side left out are removed or added.
struct OpMatch {
  std::optional<size_t> base, now;
  std::string matched_by;
};
std::vector<OpMatch> match_ops(const ModuleSamples& base, const ModuleSamples& now);

}  // namespace jaxprof
