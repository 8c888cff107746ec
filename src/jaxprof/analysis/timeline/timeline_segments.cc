#include "jaxprof/analysis/timeline/timeline_segments.h"

#include <algorithm>
#include <limits>
#include <map>
#include <tuple>

#include "jaxprof/analysis/ops/category.h"
#include "jaxprof/analysis/ops/device_events.h"
#include "jaxprof/analysis/ops/event_category.h"
#include "jaxprof/analysis/ops/memory_op.h"
#include "jaxprof/analysis/steps/module_executions.h"
#include "jaxprof/analysis/timeline/timeline.h"

namespace jaxprof {

const char* segment_kind_name(SegmentKind k) {
  switch (k) {
    case SegmentKind::kCompute:
      return "compute";
    case SegmentKind::kCommunication:
      return "communication (exposed)";
    case SegmentKind::kMemcpy:
      return "memcpy (exposed)";
    case SegmentKind::kIdleInModule:
      return "idle in module";
    case SegmentKind::kIdleBetweenModules:
      return "idle between modules";
    case SegmentKind::kSetApart:
      return "set apart";
  }
  return "?";
}

namespace {

std::vector<Interval> merged_union(std::vector<Interval> a, const std::vector<Interval>& b) {
  a.insert(a.end(), b.begin(), b.end());
  merge_intervals(a);
  return a;
}

}  // namespace

std::vector<DeviceSegments> timeline_segments(const Profile& p, const SteadyStateOptions& options) {
  std::vector<DeviceSegments> out;
  std::vector<DeviceLines> devices = op_devices(p);
  const std::vector<DeviceExecutions>& executions = module_executions(p);  // decodes device lines
  const SteadyState& steady = steady_state(p, options);
  const SteadyStateTime& steady_time = steady_state_time(p, options);
  std::map<std::tuple<uint32_t, StringId, uint32_t>, OpCategory> cache;
  const Events& ev = p.events;
  for (size_t di = 0; di < devices.size(); ++di) {
    const DeviceLines& dev = devices[di];
    std::vector<Interval> by_kind[3];
    int64_t first = std::numeric_limits<int64_t>::max(), last = std::numeric_limits<int64_t>::min();
    bool any = false;
    for (uint32_t li : dev.lines) {
      const Line& line = p.lines[li];
      const LineMemoryOps memory_op(p, li);  // the same rule as the timeline
      for (uint32_t e = line.first_event; e < line.first_event + line.event_count; ++e) {
        if (!dev.counts(ev, e)) continue;
        any = true;
        first = std::min(first, ev.start_ps[e]);
        last = std::max(last, ev.end_ps(e));
        if (steady.set_apart(e)) continue;
        TimelineKind kind = TimelineKind::kMemcpy;
        if (memory_op.never() || memory_op(e) == MemoryOp::kNone) {
          auto key = std::make_tuple(ev.metadata[e], ev.hlo_op[e], ev.module[e]);
          auto it = cache.find(key);
          if (it == cache.end()) it = cache.emplace(key, op_category(p, e)).first;
          kind = timeline_kind(it->second);
        }
        by_kind[static_cast<int>(kind)].push_back({ev.start_ps[e], ev.end_ps(e)});
      }
    }
    if (!any) continue;
    std::vector<Interval> apart;
    for (const Interval& i : steady_time.set_apart[di])
      if (i.end > first && i.begin < last)
        apart.push_back({std::max(i.begin, first), std::min(i.end, last)});
    for (auto& v : by_kind) {
      merge_intervals(v);
      if (!apart.empty()) v = subtract_intervals(v, apart);
    }
    std::vector<Interval> compute_or_comm = merged_union(by_kind[0], by_kind[1]);
    std::vector<Interval> busy = merged_union(compute_or_comm, by_kind[2]);
    std::vector<Interval> idle =
        subtract_intervals(subtract_intervals({{first, last}}, busy), apart);
    std::vector<Interval> modules;
    for (size_t k = 0; k < executions[di].executions.size(); ++k) {
      if (steady.sets_apart(steady.roles[di][k])) continue;
      const ModuleExecution& x = executions[di].executions[k];
      modules.push_back({x.start_ps, x.end_ps});
    }
    merge_intervals(modules);

    DeviceSegments d;
    d.device = dev.name;
    auto add = [&](const std::vector<Interval>& v, SegmentKind k) {
      for (const Interval& i : v)
        if (i.length() > 0) d.segments.push_back({i, k});
    };
    add(by_kind[0], SegmentKind::kCompute);
    add(subtract_intervals(by_kind[1], by_kind[0]), SegmentKind::kCommunication);
    add(subtract_intervals(by_kind[2], compute_or_comm), SegmentKind::kMemcpy);
    std::vector<Interval> between = subtract_intervals(idle, modules);
    add(subtract_intervals(idle, between), SegmentKind::kIdleInModule);
    add(between, SegmentKind::kIdleBetweenModules);
    add(apart, SegmentKind::kSetApart);
    std::sort(d.segments.begin(), d.segments.end(), [](const Segment& a, const Segment& b) {
      return a.interval.begin < b.interval.begin;
    });
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace jaxprof
