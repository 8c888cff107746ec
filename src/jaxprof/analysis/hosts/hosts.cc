#include "jaxprof/analysis/hosts/hosts.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "jaxprof/analysis/collectives/collectives.h"
#include "jaxprof/analysis/partial/extract_partials.h"
#include "jaxprof/analysis/steps/modules.h"
#include "jaxprof/analysis/steps/steps.h"
#include "jaxprof/model/partial/partial.h"

namespace jaxprof {

namespace {

// The q-quantile of sorted values (linear between ranks).
double quantile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  double at = q * static_cast<double>(sorted.size() - 1);
  size_t lo = static_cast<size_t>(at);
  size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (at - static_cast<double>(lo));
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return quantile(v, 0.5);
}

void describe_steps(std::vector<double> durations, HostRow& row) {
  std::sort(durations.begin(), durations.end());
  row.steps = durations.size();
  if (durations.empty()) return;
  double sum = 0;
  for (double d : durations) sum += d;
  row.step_mean_ps = sum / static_cast<double>(durations.size());
  row.step_median_ps = quantile(durations, 0.5);
  row.step_p90_ps = quantile(durations, 0.9);
  row.step_max_ps = durations.back();
}

// Each host's step times: its steady steps (all its steps when every one is warm-up).
std::string step_times(const PartialSet& set, std::vector<HostRow>& rows) {
  const StepsResult steps = steps_from_partials(set);
  if (!steps.steps.empty()) {
    std::vector<std::vector<double>> all(rows.size()), steady(rows.size());
    for (const Step& s : steps.steps) {
      all[s.host].push_back(static_cast<double>(s.duration_ps()));
      if (!s.warmup) steady[s.host].push_back(static_cast<double>(s.duration_ps()));
    }
    for (size_t h = 0; h < rows.size(); ++h)
      describe_steps(steady[h].empty() ? all[h] : steady[h], rows[h]);
    return steps.source;
  }
  // No step marks: the runs of the module with the most device time stand for the steps.
  const ModulesResult modules = modules_from_partials(set, {.top_ops = 0, .steps = false});
  if (modules.modules.empty()) return "none";
  const ModuleStats& top = modules.modules.front();
  std::vector<std::vector<double>> all(rows.size()), steady(rows.size());
  set.for_each_device(
      [&](const PartialSet::DeviceRef& ref, const HostPartial& h, const PartialDevice& dev) {
        for (const PartialExecution& x : dev.executions) {
          if (h.module_name(x.module) != top.name ||
              h.modules[x.module].program_id != top.program_id)
            continue;
          const double d = static_cast<double>(x.end_ps - x.start_ps);
          all[ref.host].push_back(d);
          if (!x.warmup) steady[ref.host].push_back(d);
        }
      },
      kPartExecutions);
  for (size_t h = 0; h < rows.size(); ++h)
    describe_steps(steady[h].empty() ? all[h] : steady[h], rows[h]);
  return "module " + top.name;
}

}  // namespace

HostsResult hosts_from_partials(const PartialSet& set, const HostsOptions& options) {
  set.require(kPartTimeline | kPartExecutions | kPartSteps | kPartCollectives, "hosts");
  HostsResult r;
  std::vector<HostRow> rows(set.size());
  for (size_t h = 0; h < rows.size(); ++h) rows[h].host = set.heads()[h].host;
  // A device's timeline figures are in its host's head: no host is decoded for them.
  for (const PartialSet::DeviceRef& ref : set.devices()) {
    HostRow& row = rows[ref.host];
    const DeviceTimeline& t = set.heads()[ref.host].devices[ref.device].timeline;
    ++row.devices;
    row.span_ps += t.span_ps;
    row.busy_ps += t.busy_ps;
    row.idle_ps += t.idle_ps;
    row.idle_between_modules_ps += t.idle_between_modules_ps;
  }
  for (HostRow& row : rows) {
    if (row.span_ps <= 0) continue;
    row.idle_share = static_cast<double>(row.idle_ps) / static_cast<double>(row.span_ps);
    row.host_bound_share =
        static_cast<double>(row.idle_between_modules_ps) / static_cast<double>(row.span_ps);
  }

  // Outliers by a robust z-score of the hosts' median step times (median and MAD, which a few
  // slow hosts do not move).
  r.step_source = step_times(set, rows);
  std::vector<double> medians;
  for (const HostRow& row : rows)
    if (row.steps > 0) medians.push_back(row.step_median_ps);
  if (!medians.empty()) {
    r.median_step_ps = median(medians);
    std::vector<double> deviations;
    for (double m : medians) deviations.push_back(std::abs(m - r.median_step_ps));
    r.mad_step_ps = median(deviations);
    for (HostRow& row : rows) {
      if (row.steps == 0 || medians.size() < 3) continue;
      if (r.mad_step_ps > 0) {
        row.step_score = (row.step_median_ps - r.median_step_ps) / (1.4826 * r.mad_step_ps);
        row.slow = *row.step_score > options.outlier_score;
      } else {
        // Every typical host alike: any host 5% slower than them stands out.
        row.slow = row.step_median_ps > 1.05 * r.median_step_ps;
      }
    }
  }

  // Who arrived last: a host's arrival at an instance is its last device's, and the device that
  // arrives last waits least, so each host is judged by its shortest execution of the instance.
  // Durations need no common clock; they are the ones `collectives` and `ops` report (the
  // device's own clock where events carry it). The end times, which the collective makes nearly
  // equal on every device, give each host's clock offset against the median host.
  if (set.size() > 1) {
    CollectivesOptions co;
    co.instances = true;
    co.members = true;
    const CollectivesResult coll = collectives_from_partials(set, co);
    std::vector<std::vector<double>> offsets(rows.size());
    for (const CollectiveInstance& inst : coll.instances) {
      std::map<uint32_t, std::pair<int64_t, std::vector<double>>> by_host;  // shortest, ends
      for (const CollectiveInstance::Member& m : inst.members) {
        auto [it, added] = by_host.try_emplace(m.host, m.duration_ps, std::vector<double>{});
        it->second.first = std::min(it->second.first, m.duration_ps);
        it->second.second.push_back(static_cast<double>(m.end_ps));
      }
      if (by_host.size() < 2) continue;
      ++r.instances;
      uint32_t last = by_host.begin()->first;
      int64_t shortest = by_host.begin()->second.first;
      for (const auto& [h, v] : by_host)
        if (v.first < shortest) {
          shortest = v.first;
          last = h;
        }
      std::vector<double> ends, shortest_of;
      for (auto& [h, v] : by_host) {
        ends.push_back(median(v.second));
        shortest_of.push_back(static_cast<double>(v.first));
      }
      const double reference = median(ends);
      const double typical = median(shortest_of);
      size_t k = 0;
      int64_t waited = 0;
      for (const auto& [h, v] : by_host) {
        HostRow& row = rows[h];
        ++row.collectives;
        row.late_ps += std::llround(typical - shortest_of[k]);
        offsets[h].push_back(ends[k++] - reference);
        if (h == last) continue;
        row.waited_ps += v.first - shortest;
        waited += v.first - shortest;
      }
      // Hosts that all took the same time: none of them held the others up.
      if (waited > 0) {
        rows[last].wait_caused_ps += waited;
        ++rows[last].arrived_last;
      }
    }
    for (size_t h = 0; h < rows.size(); ++h) {
      if (offsets[h].empty()) continue;
      const double m = median(offsets[h]);
      std::vector<double> deviations;
      for (double o : offsets[h]) deviations.push_back(std::abs(o - m));
      rows[h].clock_offset_ps = static_cast<int64_t>(std::llround(m));
      rows[h].clock_offset_error_ps =
          std::max<int64_t>(1000, std::llround(1.4826 * median(deviations)));
    }
  }
  if (set.size() < 2)
    r.notes.push_back("one host: nothing to compare it with");
  else if (r.instances == 0)
    r.notes.push_back("no collective spans several hosts: no stragglers or clock offsets");

  std::vector<size_t> order(rows.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (rows[a].late_ps != rows[b].late_ps) return rows[a].late_ps > rows[b].late_ps;
    if (rows[a].wait_caused_ps != rows[b].wait_caused_ps)
      return rows[a].wait_caused_ps > rows[b].wait_caused_ps;
    return rows[a].step_median_ps > rows[b].step_median_ps;
  });
  for (size_t i = 0; i < order.size(); ++i) {
    r.hosts.push_back(std::move(rows[order[i]]));
    r.hosts.back().rank = static_cast<uint32_t>(i + 1);
  }
  return r;
}

HostsResult compute_hosts(const Profile& p, const HostsOptions& options) {
  PartialExtractOptions extract;
  extract.parts = kPartTimeline | kPartExecutions | kPartSteps | kPartCollectives;
  return hosts_from_partials(PartialSet(extract_partials(p, extract)), options);
}

}  // namespace jaxprof
