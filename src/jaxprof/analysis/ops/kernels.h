// "Which GPU kernels run, how long, and how were they launched": GPU stream events grouped by
// kernel name, with their launch configurations (grid, block, registers, shared memory,
// occupancy from the kernel_details stat) and the HLO op and JAX op they came from.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "jaxprof/analysis/ops/event_filter.h"
#include "jaxprof/analysis/ops/kernel_details.h"
#include "jaxprof/analysis/steps/steady_state.h"
#include "jaxprof/model/profile.h"

namespace jaxprof {

struct KernelsOptions {
  EventFilterSpec filter;  // device, prefix, match, min_duration (max_events is not used)
  size_t top = 0;          // 0 = all kernels
  SteadyStateOptions steady;  // launches of set-apart executions are left out
};

// One launch configuration of a kernel: a distinct kernel_details text.
struct KernelConfig {
  std::string details;  // the stat text as the producer wrote it ("" when absent)
  KernelDetails parsed;
  uint64_t count = 0;
  int64_t total_ps = 0;
};

struct KernelGroup {
  std::string name;
  uint64_t count = 0;
  int64_t total_ps = 0;
  int64_t min_ps = 0;
  int64_t max_ps = 0;
  double mean_ps = 0;
  uint32_t devices = 0;  // GPUs it ran on
  // The HLO op (and its module) and JAX op path behind most of the kernel's time.
  std::string hlo_op;
  std::string module;
  std::string op_name;
  uint32_t hlo_ops = 0;               // distinct (module, HLO op) pairs that launched it
  std::vector<KernelConfig> configs;  // by total time, descending
};

struct KernelsResult {
  std::vector<std::string> devices;  // GPU planes with kernels (after --device)
  uint64_t kernel_events = 0;
  int64_t total_ps = 0;
  std::vector<KernelGroup> kernels;  // by total time, descending, then name
  size_t kernels_total = 0;          // kernels before --top kept the largest
  // Set when the profile holds no GPU kernels: says what it has instead.
  std::string no_gpu_reason;
  std::vector<std::string> warnings;
};

// Throws InputError for an invalid --device/--match regex.
KernelsResult compute_kernels(const Profile& profile, const KernelsOptions& options);

class PartialSet;
// From hosts' partials (kPartKernels): the same as compute_kernels on the hosts' profiles. The
// device and name filters apply here too; --min-duration only at extraction.
KernelsResult kernels_from_partials(const PartialSet& set, const KernelsOptions& options);

}  // namespace jaxprof
