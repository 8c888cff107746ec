#include "jaxprof/analysis/critical_path/step_work.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <optional>
#include <tuple>
#include <unordered_map>

#include "jaxprof/analysis/collectives/collectives.h"
#include "jaxprof/analysis/ops/category.h"
#include "jaxprof/analysis/ops/device_events.h"
#include "jaxprof/analysis/ops/event_category.h"
#include "jaxprof/analysis/steps/module_executions.h"
#include "jaxprof/analysis/timeline/host_launches.h"

namespace jaxprof {

namespace {

constexpr uint32_t kNone = UINT32_MAX;

// The position in `lines` of the line that holds event `e` (each owns a contiguous range of
// events).
size_t line_of(const Profile& p, const std::vector<uint32_t>& lines, uint32_t e) {
  for (size_t k = 0; k < lines.size(); ++k) {
    const Line& l = p.lines[lines[k]];
    if (e >= l.first_event && e < l.first_event + l.event_count) return k;
  }
  return 0;
}

// Collective instances, matched across devices and hosts: (host, begin, end) -> instance.
struct InstanceKey {
  uint32_t host;
  int64_t begin, end;
  bool operator==(const InstanceKey&) const = default;
};
struct InstanceKeyHash {
  size_t operator()(const InstanceKey& k) const {
    const uint64_t h = static_cast<uint64_t>(k.begin) * 0x9e3779b97f4a7c15ULL ^
                       static_cast<uint64_t>(k.end) * 0xc2b2ae3d27d4eb4fULL ^ k.host;
    return static_cast<size_t>(h ^ (h >> 29));
  }
};
// Looked up once per device op: hashed, not a tree.
using InstanceIndex = std::unordered_map<InstanceKey, uint32_t, InstanceKeyHash>;

// An op's category by (metadata, HLO op, module).
struct CategoryKey {
  uint32_t metadata, hlo_op, module;
  bool operator==(const CategoryKey&) const = default;
};
struct CategoryKeyHash {
  size_t operator()(const CategoryKey& k) const {
    const uint64_t h = (uint64_t{k.metadata} << 32 | k.hlo_op) * 0x9e3779b97f4a7c15ULL ^
                       uint64_t { k.module } * 0xc2b2ae3d27d4eb4fULL;
    return static_cast<size_t>(h ^ (h >> 29));
  }
};
using CategoryIndex = std::unordered_map<CategoryKey, OpCategory, CategoryKeyHash>;

InstanceIndex collective_instances(const Profile& profile) {
  CollectivesOptions o;
  o.instances = true;
  o.members = true;
  o.steady.include_warmup = true;
  o.steady.include_autotuning = true;
  const CollectivesResult r = compute_collectives(profile, o);
  InstanceIndex out;
  for (size_t i = 0; i < r.instances.size(); ++i)
    for (const CollectiveInstance::Member& m : r.instances[i].members)
      out.emplace(InstanceKey{m.host, m.begin_ps, m.end_ps}, static_cast<uint32_t>(i));
  return out;
}

// The device ops of one device: top-level on their lane, by start.
void add_device(const Profile& p, const DeviceLines& dev, const DeviceExecutions& de,
                uint32_t device, const HostLaunches* launches, ProfileWork& w,
                CategoryIndex& categories, const InstanceIndex& instances) {
  const Events& ev = p.events;
  const uint32_t host = p.planes[dev.plane].host;
  // Per position in dev.lines (one lane for them all when only HLO ops count): its lane, and the
  // end of its last kept op.
  const bool one_lane = dev.hlo_ops_only;
  std::vector<uint32_t> lane_of(one_lane ? 1 : std::max<size_t>(1, dev.lines.size()), kNone);
  std::vector<int64_t> lane_end(lane_of.size(), 0);
  for (const ModuleExecution& x : de.executions) {
    bool first = true;
    for (uint32_t e : x.events) {
      const size_t at = one_lane ? 0 : line_of(p, dev.lines, e);
      if (lane_of[at] == kNone) {
        lane_of[at] = static_cast<uint32_t>(w.lanes.size());
        w.lanes.push_back(
            dev.hlo_ops_only
                ? dev.name
                : dev.name + "/" +
                      std::string(p.str(p.lines[dev.lines.empty() ? 0 : dev.lines[at]].name)));
      } else if (ev.end_ps(e) <= lane_end[at] && ev.start_ps[e] < lane_end[at]) {
        continue;  // nested in the op before it on its lane
      }
      const uint32_t lane = lane_of[at];
      lane_end[at] = ev.end_ps(e);
      GraphNode n;
      n.name = ev.hlo_op[e] ? p.str(ev.hlo_op[e]) : p.event_name(e);
      const CategoryKey key{ev.metadata[e], ev.hlo_op[e], ev.module[e]};
      auto c = categories.find(key);
      if (c == categories.end()) c = categories.emplace(key, op_category(p, e)).first;
      n.category = category_name(c->second);
      n.lane = lane;
      n.device = device;
      n.host = host;
      n.start_ps = ev.start_ps[e];
      n.end_ps = ev.end_ps(e);
      const int64_t corr = ev.correlation_id.size() > e ? ev.correlation_id[e] : Events::kNoStat;
      if (launches && corr != Events::kNoStat && corr != Events::kStatInFile)
        if (std::optional<int64_t> t = launches->launch_time(corr)) n.launch_ps = *t;
      auto inst = instances.find(InstanceKey{host, n.start_ps, n.end_ps});
      const bool collective = inst != instances.end() || c->second == OpCategory::kCollective;
      n.kind = collective ? NodeKind::kCollective : NodeKind::kOp;
      w.device_nodes.push_back(std::move(n));
      w.instance.push_back(inst == instances.end() ? kNone : inst->second);
      w.execution_start.push_back(first ? 1 : 0);
      first = false;
    }
  }
}

// The host events directly under the step's annotation on its thread.
void add_host_events(const Profile& p, const Step& step, StepWork& w) {
  std::vector<uint32_t> lines;
  for (const Plane& plane : p.planes)
    if (plane.host == step.host && plane.kind == PlaneKind::kHostCpu)
      lines.insert(lines.end(), plane.lines.begin(), plane.lines.end());
  p.require_lines(lines);
  const Events& ev = p.events;
  for (uint32_t li : lines) {
    const Line& line = p.lines[li];
    const uint32_t b = line.first_event, e = b + line.event_count;
    const int64_t* starts = &ev.start_ps[0];
    uint32_t i =
        static_cast<uint32_t>(std::lower_bound(starts + b, starts + e, step.start_ps) - starts);
    for (; i < e && ev.start_ps[i] == step.start_ps; ++i)
      if (ev.end_ps(i) == step.end_ps && p.event_name(i) == step.name) break;
    if (i >= e || ev.start_ps[i] != step.start_ps) continue;
    const uint32_t lane = static_cast<uint32_t>(w.lanes.size());
    w.lanes.push_back("host " + p.hosts[step.host].name + " " + std::string(p.str(line.name)));
    int64_t kept_end = step.start_ps;
    for (uint32_t c = i + 1; c < e && ev.start_ps[c] < step.end_ps; ++c) {
      if (ev.start_ps[c] < kept_end || ev.end_ps(c) > step.end_ps) continue;
      kept_end = ev.end_ps(c);
      GraphNode n;
      n.name = p.event_name(c);
      n.category = "host";
      n.lane = lane;
      n.device = kNone;
      n.host = step.host;
      n.kind = NodeKind::kHost;
      n.start_ps = ev.start_ps[c];
      n.end_ps = ev.end_ps(c);
      w.nodes.push_back(std::move(n));
      w.instance.push_back(kNone);
      w.execution_start.push_back(0);
    }
    return;
  }
}

// Steps several hosts mark, as one: the hosts' annotations of one (number, name) together. A
// host that marks a number more than once (a loop that counts from 0 again, an evaluation loop
// of its own) has as many steps of it: its k-th joins the other hosts' k-th, never its own
// others (merged, they made one window over everything between them).
void merge_host_steps(StepsResult steps, ProfileWork& w) {
  std::map<std::tuple<int64_t, std::string, uint32_t>, size_t> index;
  const std::vector<uint32_t> occurrence = step_occurrences(steps.steps);
  for (size_t k = 0; k < steps.steps.size(); ++k) {
    Step& s = steps.steps[k];
    const bool by_host = steps.source == "host-annotation";
    auto [it, added] =
        index.emplace(std::make_tuple(s.number, s.name, occurrence[k]), w.steps.size());
    if (!by_host || added) {
      w.steps.push_back(s);
      w.parts.push_back({std::move(s)});
      continue;
    }
    Step& merged = w.steps[it->second];
    merged.start_ps = std::min(merged.start_ps, s.start_ps);
    merged.end_ps = std::max(merged.end_ps, s.end_ps);
    merged.warmup = merged.warmup || s.warmup;
    merged.windows += 1;
    w.parts[it->second].push_back(std::move(s));
  }
  std::vector<size_t> order(w.steps.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return w.steps[a].start_ps < w.steps[b].start_ps; });
  std::vector<Step> sorted_steps;
  std::vector<std::vector<Step>> sorted_parts;
  for (size_t i : order) {
    sorted_steps.push_back(std::move(w.steps[i]));
    sorted_parts.push_back(std::move(w.parts[i]));
  }
  w.steps = std::move(sorted_steps);
  w.parts = std::move(sorted_parts);
}

// (start, index) pairs in order. Each device's nodes mostly come by start already: runs in order
// are merged (a few devices, a few runs each), and pairs sorted only when there are many runs.
void sort_keys(std::vector<std::pair<int64_t, uint32_t>>& keys) {
  std::vector<size_t> runs{0};
  for (size_t k = 1; k < keys.size(); ++k)
    if (keys[k] < keys[k - 1]) runs.push_back(k);
  if (runs.size() > 256) {
    std::sort(keys.begin(), keys.end());
    return;
  }
  runs.push_back(keys.size());
  while (runs.size() > 2) {
    std::vector<size_t> merged{0};
    for (size_t r = 0; r + 1 < runs.size(); r += 2) {
      const size_t end = r + 2 < runs.size() ? runs[r + 2] : runs[r + 1];
      if (r + 2 < runs.size())
        std::inplace_merge(keys.begin() + static_cast<ptrdiff_t>(runs[r]),
                           keys.begin() + static_cast<ptrdiff_t>(runs[r + 1]),
                           keys.begin() + static_cast<ptrdiff_t>(end));
      merged.push_back(end);
    }
    runs = std::move(merged);
  }
}

// The device nodes by start, ties in the order added (the pairs are distinct, so any sort gives
// the same order), moved in place along the permutation's cycles: no second copy of the nodes.
void sort_by_start(ProfileWork& w) {
  std::vector<std::pair<int64_t, uint32_t>> keys(w.device_nodes.size());
  for (uint32_t i = 0; i < keys.size(); ++i) keys[i] = {w.device_nodes[i].start_ps, i};
  sort_keys(keys);
  std::vector<uint32_t> from(keys.size());  // position k takes the node at from[k]
  for (size_t k = 0; k < keys.size(); ++k) from[k] = keys[k].second;
  keys = {};
  for (uint32_t k = 0; k < from.size(); ++k) {
    if (from[k] == k || from[k] == kNone) continue;
    GraphNode node = std::move(w.device_nodes[k]);
    const uint32_t instance = w.instance[k];
    const uint8_t execution_start = w.execution_start[k];
    uint32_t j = k;
    while (from[j] != k) {
      const uint32_t next = from[j];
      w.device_nodes[j] = std::move(w.device_nodes[next]);
      w.instance[j] = w.instance[next];
      w.execution_start[j] = w.execution_start[next];
      from[j] = kNone;
      j = next;
    }
    w.device_nodes[j] = std::move(node);
    w.instance[j] = instance;
    w.execution_start[j] = execution_start;
    from[j] = kNone;
  }
}

}  // namespace

ProfileWork gather_profile_work(const Profile& profile) {
  return gather_profile_work(profile, compute_steps(profile));
}

ProfileWork gather_profile_work(const Profile& profile, StepsResult steps) {
  ProfileWork w;
  w.source = steps.source;
  merge_host_steps(std::move(steps), w);
  const std::vector<DeviceLines> devices = op_devices(profile);
  const std::vector<DeviceExecutions>& execs = module_executions(profile);
  const InstanceIndex instances = collective_instances(profile);
  CategoryIndex categories;
  size_t events = 0;  // at most a node each: sized once (a profile may hold millions)
  for (size_t d = 0; d < devices.size() && d < execs.size(); ++d)
    for (const ModuleExecution& x : execs[d].executions) events += x.events.size();
  w.device_nodes.reserve(events);
  w.instance.reserve(events);
  w.execution_start.reserve(events);
  // GPU kernels' launches, per host (module_executions has decoded the lines they are on).
  std::map<uint32_t, HostLaunches> launches;
  for (size_t d = 0; d < devices.size() && d < execs.size(); ++d) {
    const Plane& plane = profile.planes[devices[d].plane];
    const HostLaunches* host_launches = nullptr;
    if (plane.kind == PlaneKind::kGpu) {
      auto it = launches.find(plane.host);
      if (it == launches.end())
        it = launches
                 .emplace(plane.host, HostLaunches::index(profile, plane.host, false,
                                                          HostLaunches::IdLookup::kAuto, true))
                 .first;
      host_launches = &it->second;
    }
    w.devices.push_back(devices[d].name);
    add_device(profile, devices[d], execs[d], static_cast<uint32_t>(d), host_launches, w,
               categories, instances);
  }
  sort_by_start(w);
  for (uint32_t inst : w.instance) {
    if (inst == kNone) continue;
    if (inst >= w.instance_members.size()) w.instance_members.resize(inst + 1, 0);
    ++w.instance_members[inst];
  }
  w.member_first.assign(w.instance_members.size() + 1, 0);
  for (size_t k = 0; k < w.instance_members.size(); ++k)
    w.member_first[k + 1] = w.member_first[k] + w.instance_members[k];
  w.member_nodes.resize(w.member_first.back());
  {
    std::vector<uint32_t> at(w.member_first.begin(), w.member_first.end() - 1);
    for (uint32_t i = 0; i < w.instance.size(); ++i)
      if (w.instance[i] != kNone) w.member_nodes[at[w.instance[i]]++] = i;
  }
  if (w.steps.empty() && !w.device_nodes.empty()) {
    // No steps marked: the whole profile's device work is one window.
    Step s;
    s.name = "profile";
    s.start_ps = w.device_nodes.front().start_ps;
    for (const GraphNode& n : w.device_nodes) s.end_ps = std::max(s.end_ps, n.end_ps);
    w.steps.push_back(s);
    w.parts.push_back({s});
    w.source = "profile";
  }
  return w;
}

namespace {

// step_work; with `take`, the step's device nodes are moved out of it where the step holds all
// of them (a profile that marks no steps: its one window).
StepWork step_work_of(const Profile& profile, const ProfileWork& all, size_t index,
                      std::vector<GraphNode>* take) {
  const Step& step = all.steps[index];
  StepWork w;
  w.start_ps = step.start_ps;
  w.end_ps = step.end_ps;
  w.devices = all.devices;
  w.lanes = all.lanes;
  auto first = std::lower_bound(all.device_nodes.begin(), all.device_nodes.end(), step.start_ps,
                                [](const GraphNode& n, int64_t t) { return n.start_ps < t; });
  auto last = std::lower_bound(first, all.device_nodes.end(), step.end_ps,
                               [](const GraphNode& n, int64_t t) { return n.start_ps < t; });
  const size_t count = static_cast<size_t>(last - first);
  const size_t begin_index = static_cast<size_t>(first - all.device_nodes.begin());
  const size_t end_index = static_cast<size_t>(last - all.device_nodes.begin());
  if (take && count == all.device_nodes.size()) {
    w.nodes = std::move(*take);
  } else {
    w.nodes.assign(first, last);
  }
  w.instance.reserve(count);
  w.execution_start.reserve(count);
  std::unordered_map<uint32_t, uint32_t> local;  // global instance -> this step's
  for (size_t i = begin_index; i < end_index; ++i) {
    uint32_t inst = all.instance[i];
    if (inst != kNone)
      inst = local.emplace(inst, static_cast<uint32_t>(local.size())).first->second;
    w.instance.push_back(inst);
    w.execution_start.push_back(all.execution_start[i]);
  }
  w.instances = static_cast<uint32_t>(local.size());
  w.instance_members.resize(w.instances);
  std::vector<uint32_t> in_step(w.instances, 0);
  for (uint32_t inst : w.instance)
    if (inst != kNone) ++in_step[inst];
  for (const auto& [global, mine] : local) {
    w.instance_members[mine] = all.instance_members[global];
    if (in_step[mine] >= all.instance_members[global] || global + 1 >= all.member_first.size())
      continue;
    // The participants that start after the step: where their lanes are when they arrive.
    for (uint32_t k = all.member_first[global]; k < all.member_first[global + 1]; ++k) {
      const uint32_t i = all.member_nodes[k];
      if (i < end_index) continue;
      const GraphNode& n = all.device_nodes[i];
      w.outside.push_back({mine, n.lane, n.start_ps});
    }
  }
  if (all.source == "host-annotation")
    for (const Step& part : all.parts[index]) add_host_events(profile, part, w);
  return w;
}

}  // namespace

StepWork step_work(const Profile& profile, const ProfileWork& all, size_t index) {
  return step_work_of(profile, all, index, nullptr);
}

StepWork take_step_work(const Profile& profile, ProfileWork& all, size_t index) {
  return step_work_of(profile, all, index, &all.device_nodes);
}

}  // namespace jaxprof
