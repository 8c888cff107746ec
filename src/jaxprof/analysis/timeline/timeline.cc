#include "jaxprof/analysis/timeline/timeline.h"

#include <algorithm>
#include <limits>
#include <map>
#include <tuple>

#include "jaxprof/analysis/ops/device_events.h"
#include "jaxprof/analysis/ops/event_category.h"
#include "jaxprof/analysis/ops/memory_op.h"
#include "jaxprof/analysis/partial/extract_partials.h"
#include "jaxprof/analysis/partial/partial_build.h"
#include "jaxprof/analysis/steps/module_executions.h"
#include "jaxprof/analysis/timeline/intervals.h"
#include "jaxprof/common/parallel_parts.h"

namespace jaxprof {

TimelineKind timeline_kind(OpCategory c) {
  switch (c) {
    case OpCategory::kCollective:
      return TimelineKind::kCommunication;
    case OpCategory::kMemcpy:
      return TimelineKind::kMemcpy;
    default:
      return TimelineKind::kCompute;
  }
}

namespace {

int64_t length(const std::vector<Interval>& v) {
  int64_t total = 0;
  for (const Interval& i : v) total += i.length();
  return total;
}

// The union of two merged (sorted, disjoint) lists, merged: one linear pass.
std::vector<Interval> merged_union(const std::vector<Interval>& a, const std::vector<Interval>& b) {
  std::vector<Interval> out;
  out.reserve(a.size() + b.size());
  size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    const Interval& next =
        j == b.size() || (i < a.size() && a[i].begin <= b[j].begin) ? a[i++] : b[j++];
    if (!out.empty() && next.begin <= out.back().end)
      out.back().end = std::max(out.back().end, next.end);
    else
      out.push_back(next);
  }
  return out;
}

// Op categories, past what the event's own stats and line say (memory_op.h), depend on
// (metadata, hlo op, module) only: decided once per combination. Most
// metadata entries come with one (hlo op, module): that first one is kept per metadata.
class CategoryCache {
 public:
  explicit CategoryCache(const Profile& p) : p_(p), first_of_(p.event_metadata.size()) {}

  OpCategory operator()(uint32_t e) {
    const Events& ev = p_.events;
    First& f = first_of_[ev.metadata[e]];
    if (f.set && f.hlo_op == ev.hlo_op[e] && f.module == ev.module[e]) return f.category;
    auto key = std::make_tuple(ev.metadata[e], ev.hlo_op[e], ev.module[e]);
    auto it = cache_.find(key);
    if (it == cache_.end()) it = cache_.emplace(key, op_category(p_, e)).first;
    if (!f.set) f = {true, ev.hlo_op[e], ev.module[e], it->second};
    return it->second;
  }

 private:
  struct First {
    bool set = false;
    StringId hlo_op = 0;
    uint32_t module = 0;
    OpCategory category = OpCategory::kOther;
  };
  const Profile& p_;
  std::map<std::tuple<uint32_t, StringId, uint32_t>, OpCategory> cache_;
  std::vector<First> first_of_;
};

// One device's timeline; t.events stays 0 when it has no op events.
void device_timeline(const Profile& p, const DeviceLines& dev, const DeviceExecutions& executions,
                     const SteadyState& steady, const std::vector<ExecutionRole>& roles,
                     const std::vector<Interval>& set_apart, CategoryCache& category_of,
                     DeviceTimeline& t) {
  t.device = dev.name;
  t.host = p.hosts[p.planes[dev.plane].host].name;
  // Each kind's merged intervals. A line is sorted by start, so its intervals merge as they come
  // (no list of every event: back-to-back ops become one interval); the lines' lists are then
  // merged into the device's.
  std::vector<Interval> by_kind[3], of_line[3];
  int64_t first = std::numeric_limits<int64_t>::max(), last = std::numeric_limits<int64_t>::min();
  const Events& ev = p.events;
  for (uint32_t li : dev.lines) {
    const Line& line = p.lines[li];
    for (auto& v : of_line) v.clear();
    const LineMemoryOps memory_op(p, li);
    const bool maybe_memory = !memory_op.never();
    for (uint32_t e = line.first_event; e < line.first_event + line.event_count; ++e) {
      if (!dev.counts(ev, e)) continue;
      ++t.events;
      const int64_t begin = ev.start_ps[e], end = ev.end_ps(e);
      first = std::min(first, begin);
      last = std::max(last, end);
      if (steady.set_apart(e)) continue;
      const TimelineKind kind = maybe_memory && memory_op(e) != MemoryOp::kNone
                                    ? TimelineKind::kMemcpy
                                    : timeline_kind(category_of(e));
      append_merged(of_line[static_cast<int>(kind)], begin, end);
    }
    for (int k = 0; k < 3; ++k) {
      if (of_line[k].empty()) continue;
      if (by_kind[k].empty())
        by_kind[k].swap(of_line[k]);
      else
        by_kind[k] = merged_union(by_kind[k], of_line[k]);
    }
  }
  if (t.events == 0) return;
  // Steady-state time only: what lies in set-apart time (a stray op while compiling) is cut.
  const std::vector<Interval> span = {{first, last}};
  std::vector<Interval> apart;
  for (const Interval& i : set_apart)
    if (i.end > first && i.begin < last)
      apart.push_back({std::max(i.begin, first), std::min(i.end, last)});
  if (!apart.empty())
    for (auto& v : by_kind)
      if (!v.empty() && intersection_length(v, apart) > 0) v = subtract_intervals(v, apart);
  const std::vector<Interval>& compute = by_kind[0];
  const std::vector<Interval>& comm = by_kind[1];
  const std::vector<Interval>& memcpy = by_kind[2];
  // Unions with an empty side are the other side: not copied (they can be millions long).
  std::vector<Interval> compute_or_comm_copy, busy_copy;
  const std::vector<Interval>& compute_or_comm =
      comm.empty() ? compute : (compute_or_comm_copy = merged_union(compute, comm));
  const std::vector<Interval>& busy =
      memcpy.empty() ? compute_or_comm : (busy_copy = merged_union(compute_or_comm, memcpy));

  // Lengths of differences without building them: |A \ B| = |A| - |A ∩ B| for merged lists,
  // and busy time lies within [first, last).
  t.span_ps = last - first;
  t.compute_ps = length(compute);
  t.comm_ps = length(comm);
  t.comm_exposed_ps = t.comm_ps - intersection_length(comm, compute);
  t.memcpy_ps = length(memcpy);
  t.memcpy_exposed_ps = t.memcpy_ps - intersection_length(memcpy, compute_or_comm);
  t.busy_ps = length(busy);
  t.set_apart_ps = length(apart);
  t.idle_ps = t.span_ps - t.set_apart_ps - t.busy_ps;

  std::vector<Interval> modules;
  for (size_t k = 0; k < executions.executions.size(); ++k) {
    if (k < roles.size() && steady.sets_apart(roles[k])) continue;
    const ModuleExecution& x = executions.executions[k];
    modules.push_back({x.start_ps, x.end_ps});
  }
  t.executions = modules.size();
  merge_intervals(modules);
  if (!apart.empty()) modules = subtract_intervals(modules, apart);
  t.idle_in_modules_ps = intersection_length(span, modules) - intersection_length(busy, modules);
  t.idle_between_modules_ps = t.idle_ps - t.idle_in_modules_ps;
}

// Op events worth a thread of their own.
constexpr uint64_t kEventsPerThread = 50000;

}  // namespace

void extract_timelines(PartialBuild& b) {
  const Profile& p = b.p;
  const std::vector<DeviceLines>& devices = b.devices;
  const std::vector<DeviceExecutions>& executions =
      module_executions(p);  // decodes the device lines
  const SteadyState& steady = steady_state(p, b.steady);
  const SteadyStateTime& steady_time = steady_state_time(p, b.steady);
  // Devices in parallel, each thread with its own category cache.
  std::vector<uint64_t> costs;
  uint64_t total = 0;
  for (const DeviceLines& dev : devices) total += costs.emplace_back(dev.line_events(p));
  const size_t threads = parts_for(total, kEventsPerThread);
  std::vector<CategoryCache> caches(threads, CategoryCache(p));
  std::vector<DeviceTimeline> timelines(devices.size());
  {
    Profile::ReadOnlyScope reading(p);
    for_each_parallel(costs, threads, [&](size_t di, size_t thread) {
      device_timeline(p, devices[di], executions[di], steady, steady.roles[di],
                      steady_time.set_apart[di], caches[thread], timelines[di]);
    });
  }
  for (size_t di = 0; di < devices.size(); ++di) {
    timelines[di].device.clear();
    timelines[di].host.clear();
    b.device(di).timeline = std::move(timelines[di]);
  }
}

TimelineResult timeline_from_partials(const PartialSet& set, const SteadyStateOptions& steady) {
  set.require(kPartTimeline, "timeline");
  set.require_steady(steady, "timeline");
  TimelineResult result;
  set.for_each_device(
      [&](const PartialSet::DeviceRef&, const HostPartial& h, const PartialDevice& dev) {
        if (dev.timeline.events == 0) return;
        DeviceTimeline& t = result.devices.emplace_back(dev.timeline);
        t.device = dev.name;
        t.host = h.host;
      },
      kPartTimeline);
  if (!result.devices.empty()) {
    TimelineAverage& a = result.average;
    for (const DeviceTimeline& t : result.devices) {
      a.span_ps += static_cast<double>(t.span_ps);
      a.set_apart_ps += static_cast<double>(t.set_apart_ps);
      a.busy_ps += static_cast<double>(t.busy_ps);
      a.compute_ps += static_cast<double>(t.compute_ps);
      a.comm_ps += static_cast<double>(t.comm_ps);
      a.comm_exposed_ps += static_cast<double>(t.comm_exposed_ps);
      a.memcpy_ps += static_cast<double>(t.memcpy_ps);
      a.memcpy_exposed_ps += static_cast<double>(t.memcpy_exposed_ps);
      a.idle_ps += static_cast<double>(t.idle_ps);
      a.idle_in_modules_ps += static_cast<double>(t.idle_in_modules_ps);
      a.idle_between_modules_ps += static_cast<double>(t.idle_between_modules_ps);
    }
    double n = static_cast<double>(result.devices.size());
    for (double* v : {&a.span_ps, &a.set_apart_ps, &a.busy_ps, &a.compute_ps, &a.comm_ps,
                      &a.comm_exposed_ps, &a.memcpy_ps, &a.memcpy_exposed_ps, &a.idle_ps,
                      &a.idle_in_modules_ps, &a.idle_between_modules_ps})
      *v /= n;
  }
  return result;
}

TimelineResult compute_timeline(const Profile& p, const SteadyStateOptions& steady) {
  PartialExtractOptions extract;
  extract.parts = kPartTimeline;
  extract.steady = steady;
  return timeline_from_partials(PartialSet(extract_partials(p, extract)), steady);
}

}  // namespace jaxprof
