#include "jaxprof/analysis/summary/summary.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <unordered_map>

#include "jaxprof/analysis/collectives/collectives.h"
#include "jaxprof/analysis/compile/compile.h"
#include "jaxprof/analysis/ops/ops.h"
#include "jaxprof/analysis/partial/extract_partials.h"
#include "jaxprof/analysis/steps/modules.h"
#include "jaxprof/analysis/timeline/timeline.h"
#include "jaxprof/common/error.h"
#include "jaxprof/common/units.h"
#include "jaxprof/model/partial/partial.h"

namespace jaxprof {

namespace {

std::string pct(double share) { return fmt::format("{:.0f}%", share * 100); }

std::string dur(double ps) { return human_duration(ps); }

// Thresholds: below them an observation is not worth a line on the one screen.
constexpr double kIdleShare = 0.20;
constexpr double kExposedShare = 0.05;
constexpr double kDominantOpShare = 0.40;
constexpr double kCompileShare = 0.10;
constexpr double kMemcpyShare = 0.10;

void observe(SummaryResult& r, const CollectivesResult& coll) {
  const SummaryDeviceTime& d = r.device;
  const int64_t steady_span = d.steady_span_ps();
  if (d.devices == 0 || steady_span <= 0) return;
  const double n = d.devices;
  auto add = [&](std::string rule, std::string text, double time_ps, double share) {
    r.observations.push_back(
        {std::move(rule), std::move(text), static_cast<int64_t>(time_ps + 0.5), share});
  };
  double between = r.shares(d.idle_between_modules_ps, steady_span, "idle between modules");
  if (d.executions == 0 && between >= kIdleShare)
    add("idle",
        fmt::format("{} of device time is idle (the profile has no module executions to place it "
                    "in): host-bound?",
                    pct(between)),
        d.idle_between_modules_ps / n, between);
  else if (between >= kIdleShare)
    add("idle-between-modules",
        fmt::format("{} of device time is idle between module executions: host-bound? (the host "
                    "does not launch programs fast enough; look at Python and input work between "
                    "steps)",
                    pct(between)),
        d.idle_between_modules_ps / n, between);
  double inside = r.shares(d.idle_in_modules_ps, steady_span, "idle inside modules");
  if (inside >= kIdleShare)
    add("idle-in-modules",
        fmt::format("{} of device time is idle inside module executions: ops wait for the host, "
                    "for transfers or for each other",
                    pct(inside)),
        d.idle_in_modules_ps / n, inside);
  if (!r.collectives.empty()) {
    const SummaryCollective& c =
        *std::max_element(r.collectives.begin(), r.collectives.end(),
                          [](const SummaryCollective& a, const SummaryCollective& b) {
                            return a.exposed_ps < b.exposed_ps;
                          });
    double share = r.shares(c.exposed_ps, steady_span, c.name + " exposed");
    if (share >= kExposedShare)
      add("exposed-collective",
          fmt::format("{} ({}, N={}) is exposed for {} per execution, {} of device time: "
                      "communication not hidden behind compute",
                      c.name, c.opcode, c.group_size, dur(c.exposed_per_execution_ps), pct(share)),
          c.exposed_ps / n, share);
  }
  if (!r.ops.empty()) {
    const SummaryOp& op = r.ops.front();
    if (op.share >= kDominantOpShare)
      add("dominant-op",
          fmt::format("one op, {}{}{}, is {} of device busy time", op.name,
                      op.module.empty() ? "" : " in " + op.module,
                      op.source.empty() ? "" : " (" + op.source + ")", pct(op.share)),
          op.self_ps / n, op.share);
  }
  double memcpy = r.shares(d.memcpy_exposed_ps, steady_span, "exposed memcpy");
  if (memcpy >= kMemcpyShare)
    add("exposed-memcpy",
        fmt::format("{} of device time is memory copies hidden by nothing (host<->device "
                    "transfers on the critical path?)",
                    pct(memcpy)),
        d.memcpy_exposed_ps / n, memcpy);
  double mean_span = d.span_ps / n;
  // Each host compiles its own programs while its devices run: a host's compile time, not the
  // sum over the hosts, is what compares with a device's span (10 hosts read together showed
  // 717% of the span, clipped to 100%).
  const size_t hosts = std::max<size_t>(1, r.hosts.size());
  const double compile_per_host = static_cast<double>(r.compile.wall_ps) / hosts;
  if (r.compile.wall_ps > 0 && compile_per_host >= kCompileShare * mean_span) {
    double share = r.shares(compile_per_host, mean_span, "compiling");
    add("compile",
        fmt::format("compiling took {}{} ({} compile{}{}, most in {}), {} of the devices' span: "
                    "warm-up in the capture{}",
                    dur(compile_per_host), hosts > 1 ? " a host" : "", r.compile.compiles,
                    r.compile.compiles == 1 ? "" : "s",
                    hosts > 1 ? fmt::format(" on {} hosts", hosts) : std::string(),
                    r.compile.top_module.empty() ? "an unnamed module" : r.compile.top_module,
                    pct(share),
                    r.compile.recompiled_modules ? ", and recompiles (changing shapes or static "
                                                   "arguments?)"
                                                 : ""),
        compile_per_host, share);
  }
  if (!coll.most_late_device.empty() && coll.multi_device_instances >= 3 &&
      2 * coll.most_late_count >= coll.multi_device_instances) {
    int64_t wait = 0;
    for (const CollectiveOp& op : coll.ops) wait += op.wait_total_ps;
    if (wait > 0)
      add("late-device",
          fmt::format("{} starts last at {} of {} collectives; the others wait {} in all for "
                      "it: a straggler",
                      coll.most_late_device, coll.most_late_count, coll.multi_device_instances,
                      dur(static_cast<double>(wait))),
          wait / n, r.shares(wait, steady_span, "waiting for " + coll.most_late_device));
  }
  std::stable_sort(
      r.observations.begin(), r.observations.end(),
      [](const Observation& a, const Observation& b) { return a.time_ps > b.time_ps; });
}

}  // namespace

uint32_t summary_parts() {
  return kPartOps | kPartTimeline | kPartExecutions | kPartCollectives | kPartCompileTotals;
}

namespace {

void summarize_device_time(const PartialSet& set, const SummaryOptions& options, SummaryResult& r) {
  const TimelineResult tl = timeline_from_partials(set, options.steady);
  for (const DeviceTimeline& d : tl.devices) {
    SummaryDeviceTime& s = r.device;
    ++s.devices;
    s.executions += d.executions;
    s.span_ps += d.span_ps;
    s.set_apart_ps += d.set_apart_ps;
    s.busy_ps += d.busy_ps;
    s.compute_ps += d.compute_ps;
    s.comm_exposed_ps += d.comm_exposed_ps;
    s.memcpy_exposed_ps += d.memcpy_exposed_ps;
    s.idle_ps += d.idle_ps;
    s.idle_in_modules_ps += d.idle_in_modules_ps;
    s.idle_between_modules_ps += d.idle_between_modules_ps;
  }
  SummaryDeviceTime& d = r.device;
  const double steady = static_cast<double>(d.steady_span_ps());
  auto share = [&](int64_t ps, const char* what) {
    return r.shares(static_cast<double>(ps), steady, what);
  };
  d.idle_share = share(d.idle_ps, "idle");
  d.compute_share = share(d.compute_ps, "compute");
  d.comm_exposed_share = share(d.comm_exposed_ps, "exposed communication");
  d.memcpy_exposed_share = share(d.memcpy_exposed_ps, "exposed memcpy");
  d.idle_in_modules_share = share(d.idle_in_modules_ps, "idle inside modules");
  d.idle_between_modules_share = share(d.idle_between_modules_ps, "idle between modules");
}

void summarize_modules(const PartialSet& set, const SummaryOptions& options, SummaryResult& r) {
  const ModulesResult mods =
      modules_from_partials(set, {.top_ops = 0, .steps = false, .steady = options.steady});
  for (const ModuleStats& m : mods.modules) {
    if (r.modules.size() >= options.top) break;
    r.modules.push_back(
        {m.name, m.program_id, m.executions, m.warmup_executions, m.mean_ps, m.total_ps, m.share});
  }
}

void summarize_ops(const PartialSet& set, const SummaryOptions& options, SummaryResult& r) {
  // Ops over all devices: the same HLO op on every device is one row. Devices are merged one at
  // a time: with a thousand hosts their groups alone would be the largest part of the memory.
  int64_t busy = 0;
  std::map<std::pair<std::string, std::string>, SummaryOp> merged;
  uint64_t op_events = 0, device_clock_events = 0;
  for_each_device_ops(set, {.steady = options.steady}, [&](DeviceOps&& d) {
    busy += d.busy_ps;
    op_events += d.events;
    device_clock_events += d.device_clock_events;
    for (const OpGroup& g : d.groups) {
      SummaryOp& o = merged[{g.module, g.name}];
      if (o.count == 0) {
        o.name = g.name;
        o.module = g.module;
        o.opcode = g.opcode;
        o.op_name = g.op_name;
        o.source = g.source;
      }
      o.count += g.count;
      o.total_ps += g.total_ps;
      o.self_ps += g.self_ps;
    }
  });
  r.duration_clock = duration_clock(device_clock_events, op_events);
  std::vector<SummaryOp> all_ops;
  for (auto& [key, o] : merged) {
    o.share = r.shares(o.self_ps, busy, o.name);
    all_ops.push_back(std::move(o));
  }
  std::sort(all_ops.begin(), all_ops.end(), [](const SummaryOp& a, const SummaryOp& b) {
    if (a.self_ps != b.self_ps) return a.self_ps > b.self_ps;
    return a.name < b.name;
  });
  if (all_ops.size() > options.top) all_ops.resize(options.top);
  r.ops = std::move(all_ops);
}

void summarize_compiles(const CompileResult& comp, SummaryResult& r) {
  r.compile.compiles = comp.compiles.size();
  r.compile.wall_ps = comp.wall_ps;
  if (!comp.modules.empty()) {
    r.compile.top_module = comp.modules.front().module;
    r.compile.top_module_wall_ps = comp.modules.front().wall_ps;
  }
  for (const ModuleCompile& m : comp.modules)
    if (!m.module.empty() && m.compiles > 1) ++r.compile.recompiled_modules;
}

// Last: the observations read the figures above and the collectives.
void summarize_collectives(const PartialSet& set, const SummaryOptions& options, SummaryResult& r) {
  const CollectivesResult coll = collectives_from_partials(set, {.steady = options.steady});
  r.bandwidth_convention = coll.convention;
  std::vector<const CollectiveOp*> by_exposed;
  for (const CollectiveOp& c : coll.ops) by_exposed.push_back(&c);
  std::stable_sort(
      by_exposed.begin(), by_exposed.end(),
      [](const CollectiveOp* a, const CollectiveOp* b) { return a->exposed_ps > b->exposed_ps; });
  for (const CollectiveOp* c : by_exposed) {
    if (r.collectives.size() >= options.top) break;
    SummaryCollective& s = r.collectives.emplace_back();
    s.name = c->name;
    s.module = c->module;
    s.program_id = c->program_id;
    s.opcode = c->opcode;
    s.group_size = c->group_size;
    s.message_bytes = c->message_bytes;
    s.count = c->count;
    s.total_ps = c->total_ps;
    s.exposed_ps = c->exposed_ps;
    s.exposed_per_execution_ps =
        c->count ? static_cast<double>(c->exposed_ps) / static_cast<double>(c->count) : 0;
    s.busbw_gbps = c->busbw_gbps;
  }
  r.warnings = coll.warnings;
  observe(r, coll);
  if (r.shares.clipped())
    r.warnings.push_back(r.shares.warning("its base (busy or steady device time)"));
  if (r.observations.size() > options.observations) r.observations.resize(options.observations);
}

}  // namespace

std::string critical_path_unavailable(size_t hosts) {
  return hosts > 1 ? fmt::format(
                         "the path across {} hosts needs their events together "
                         "(`jaxprof critical-path` reads them so)",
                         hosts)
                   : "partial summaries keep no events to follow (`jaxprof critical-path` reads "
                     "the profile)";
}

CriticalPathDigest summary_critical_path(const Profile& profile, size_t top) {
  try {
    return digest_critical_path(profile, top);
  } catch (const InputError& e) {
    CriticalPathDigest d;
    d.unavailable = e.what();
    return d;
  }
}

SummaryResult summary_from_partials(const PartialSet& set, const SummaryOptions& options) {
  set.require(summary_parts() & ~kPartCompileTotals, "summary");
  set.require_steady(options.steady, "summary");
  SummaryResult r;
  for (const HostPartial& h : set.heads()) r.hosts.push_back(h.host);
  // Each analysis's result is reduced to the summary's figures and dropped before the next one
  // runs: with thousands of hosts their per-device results are the largest part of the memory.
  const CompileResult comp = compile_from_partials(set, {.top_steps = 1, .totals_only = true});
  // What was set apart: the hosts' sums, and the compiles (they mark the compiling time).
  r.set_apart = set_apart_from_partials(set, options.steady, &comp);

  summarize_device_time(set, options, r);
  summarize_modules(set, options, r);
  summarize_ops(set, options, r);
  summarize_compiles(comp, r);
  summarize_collectives(set, options, r);
  r.critical_path.unavailable = critical_path_unavailable(r.hosts.size());
  return r;
}

SummaryResult compute_summary(const Profile& p, const SummaryOptions& options) {
  PartialExtractOptions extract;
  extract.parts = summary_parts();
  extract.steady = options.steady;
  SummaryResult r = summary_from_partials(PartialSet(extract_partials(p, extract)), options);
  // Several hosts: unavailable, as the command (which reads them one by one) has it.
  if (options.critical_path && r.hosts.size() == 1)
    r.critical_path = summary_critical_path(p, options.top);
  return r;
}

}  // namespace jaxprof
