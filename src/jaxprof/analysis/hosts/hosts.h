// "Which host holds the others up": what only many hosts can show. Per host, the distribution of
// its step times and whether it is an outlier among the hosts; for every collective instance
// that spans several hosts, which host arrived last and how long the others waited for it, summed
// into a ranking of stragglers over the whole capture; each host's idle time and the part of it
// between module executions (host-bound); and, where collectives allow, each host's clock offset.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace jaxprof {

class PartialSet;
class Profile;

struct HostsOptions {
  double outlier_score = 3.5;  // robust z-score of a host's median step time that flags it
};

struct HostRow {
  std::string host;
  uint32_t devices = 0;
  // Step times: the host's steady steps, or (no step marks) its runs of the top module.
  uint64_t steps = 0;
  double step_mean_ps = 0, step_median_ps = 0, step_p90_ps = 0, step_max_ps = 0;
  std::optional<double> step_score;  // (median - median of hosts) / (1.4826 MAD of hosts)
  bool slow = false;                 // an outlier on the slow side
  // Device time over the host's devices.
  int64_t span_ps = 0, busy_ps = 0, idle_ps = 0, idle_between_modules_ps = 0;
  double idle_share = 0;        // idle / span
  double host_bound_share = 0;  // idle between module executions / span
  // Collective instances that span several hosts.
  uint64_t collectives = 0;    // instances it took part in
  uint64_t arrived_last = 0;   // instances it arrived last at
  int64_t wait_caused_ps = 0;  // the other hosts' waiting at those instances
  int64_t waited_ps = 0;       // its own waiting for later hosts
  // How much later than the median host it arrived, summed over instances (negative: earlier).
  int64_t late_ps = 0;
  std::optional<int64_t> clock_offset_ps;  // its clock against the median host's
  // How far the estimate may be off: 1.4826 x the median absolute deviation of the
  // per-instance estimates (a standard deviation where they scatter normally), at least 1 ns,
  // the resolution of the end times the estimate is the median of.
  std::optional<int64_t> clock_offset_error_ps;
  uint32_t rank = 0;  // by late_ps: 1 = the host that arrives latest at collectives
};

struct HostsResult {
  std::string step_source;  // steps.h sources, "module NAME", or "none"
  double median_step_ps = 0;
  double mad_step_ps = 0;
  uint64_t instances = 0;      // collective instances across hosts
  std::vector<HostRow> hosts;  // by rank
  std::vector<std::string> notes;
};

HostsResult hosts_from_partials(const PartialSet& set, const HostsOptions& options = {});
// The same of a profile loaded whole (every host of it in memory).
HostsResult compute_hosts(const Profile& profile, const HostsOptions& options = {});

}  // namespace jaxprof
