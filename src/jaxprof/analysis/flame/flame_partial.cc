#include "jaxprof/analysis/flame/flame_partial.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "jaxprof/analysis/flame/flame_builder.h"
#include "jaxprof/analysis/ops/event_filter.h"
#include "jaxprof/analysis/partial/partial_build.h"
#include "jaxprof/common/error.h"

namespace jaxprof {

void extract_flame(PartialBuild& b, uint8_t bys) {
  const Profile& p = b.p;
  const Events& ev = p.events;
  // The modules each device's op events name, set apart or not (compute_flame labels a module
  // frame by them).
  for (size_t di = 0; di < b.devices.size(); ++di) {
    const DeviceLines& dev = b.devices[di];
    std::vector<uint8_t> used(p.modules.size(), 0);
    for (uint32_t li : dev.lines)
      for (uint32_t e = p.lines[li].first_event;
           e < p.lines[li].first_event + p.lines[li].event_count; ++e)
        if (dev.counts(ev, e)) used[ev.module[e]] = 1;
    const uint32_t host = b.where[di].host;
    PartialFlame& f = b.device(di).flame;
    for (uint32_t m = 1; m < used.size(); ++m)
      if (used[m]) f.modules_used.push_back(b.module(host, m));
    std::sort(f.modules_used.begin(), f.modules_used.end());
  }
  for (uint32_t by = 0; by < 3; ++by) {
    if (!(bys & (1u << by))) continue;
    FlameOptions o;
    o.by = static_cast<FlameBy>(by);
    o.idle = true;  // the idle figures; the frames are made again from them
    o.steady = b.steady;
    FlameTree tree = compute_flame(p, o);
    for (const FlameDevice& fd : tree.devices) {
      const uint32_t host = b.where[fd.op_device].host;
      HostPartial& h = b.hosts[host];
      PartialFlame& f = b.device(fd.op_device).flame;
      f.present = true;
      f.bys |= static_cast<uint8_t>(1u << by);
      f.events = fd.events;
      f.busy_ps = fd.busy_ps;
      f.span_ps = fd.span_ps;
      f.has_modules = fd.has_modules;
      f.idle_during_modules_ps = fd.idle_during_modules_ps;
      f.idle_between_modules_ps = fd.idle_between_modules_ps;
      f.set_apart_ps = fd.set_apart_ps;
      // The device's frames in the order they were made (ids ascend with it), idle ones left out.
      std::vector<uint32_t> ids, todo = {fd.node};
      while (!todo.empty()) {
        uint32_t n = todo.back();
        todo.pop_back();
        for (uint32_t c : tree.nodes[n].children)
          if (tree.nodes[c].kind != FrameKind::kIdle) {
            ids.push_back(c);
            todo.push_back(c);
          }
      }
      std::sort(ids.begin(), ids.end());
      std::map<uint32_t, uint32_t> local;  // node -> 1 + its index
      std::vector<PartialFlameFrame>& frames = f.by[by];
      for (uint32_t id : ids) {
        const FlameNode& n = tree.nodes[id];
        PartialFlameFrame fr;
        fr.parent = n.parent == fd.node ? 0 : local.at(n.parent);
        fr.kind = static_cast<uint8_t>(n.kind);
        if (n.kind == FrameKind::kModule)
          fr.module = b.module(host, n.module);
        else
          fr.name = h.strings.id(n.name);
        fr.self_ps = n.self_ps;
        frames.push_back(fr);
        local[id] = static_cast<uint32_t>(frames.size());
      }
    }
  }
}

FlameTree flame_from_partials(const PartialSet& set, const FlameOptions& options) {
  const uint32_t by = static_cast<uint32_t>(options.by);
  set.require(kPartFlame, "flame");
  set.require_steady(options.steady, "flame");
  // Hosts are read one at a time, twice: the programs each module name stands for, then the
  // stacks.
  // Module frames are the module name, with the program id where the op events of the whole set
  // name several programs of that name (as compute_flame decides over all devices).
  std::map<std::string, std::set<ProgramId>, std::less<>> programs;
  set.for_each_device(
      [&](const PartialSet::DeviceRef&, const HostPartial& h, const PartialDevice& dev) {
        const PartialFlame& f = dev.flame;
        if (f.present && !(f.bys & (1u << by)))
          throw InputError(h.path, fmt::format("the partial of host {} lacks the flamegraph by "
                                               "{}: write it again with `jaxprof partial`",
                                               h.host, flame_by_name(options.by)));
        for (uint32_t m : f.modules_used)
          programs[std::string(h.module_name(m))].insert(h.modules[m].program_id);
      },
      kPartFlame);
  EventFilterSpec spec;
  spec.device = options.device;
  EventFilter filter(spec);
  auto module_frame = [&](const HostPartial& h, uint32_t m) -> std::string {
    std::string_view name = h.module_name(m);
    if (m == 0 || name.empty()) return "(no module)";
    ProgramId program = h.modules[m].program_id;
    auto it = programs.find(name);
    if (it == programs.end() || it->second.size() <= 1 || program == kNoProgram)
      return std::string(name);
    return fmt::format("{}({})", name, program);
  };

  FlameTree tree;
  tree.by = options.by;
  FlameTreeBuilder builder(tree);
  const bool several_hosts = set.size() > 1;
  uint32_t op_device = 0;  // the device's place in set.devices()
  set.for_each_device(
      [&](const PartialSet::DeviceRef&, const HostPartial& h, const PartialDevice& dev) {
        const uint32_t place = op_device++;
        const PartialFlame& f = dev.flame;
        if (!f.present || !filter.keeps_device(dev.name)) return;
        FlameDevice fd;
        fd.device = dev.name;
        fd.host = h.host;
        fd.op_device = place;
        fd.busy_ps = f.busy_ps;
        fd.span_ps = f.span_ps;
        fd.events = f.events;
        if (options.idle) {
          fd.has_idle = true;
          fd.has_modules = f.has_modules;
          fd.idle_during_modules_ps = f.idle_during_modules_ps;
          fd.idle_between_modules_ps = f.idle_between_modules_ps;
          fd.set_apart_ps = f.set_apart_ps;
        }
        fd.node = options.merge_devices
                      ? 0
                      : builder.child(0, flame_device_frame(fd, several_hosts), FrameKind::kDevice);
        add_idle_frames(builder, fd);
        const std::vector<PartialFlameFrame>& frames = f.by[by];
        std::vector<uint32_t> node(frames.size() + 1);
        node[0] = fd.node;
        for (size_t i = 0; i < frames.size(); ++i) {
          const PartialFlameFrame& fr = frames[i];
          FrameKind kind = static_cast<FrameKind>(fr.kind);
          node[i + 1] = builder.child(
              node[fr.parent],
              kind == FrameKind::kModule ? module_frame(h, fr.module) : std::string(h.str(fr.name)),
              kind);
          builder.add(node[i + 1], {}, fr.self_ps);
        }
        tree.devices.push_back(std::move(fd));
      },
      kPartFlame);
  builder.finish();
  if (options.merge_devices) {
    // The root holds frames, not devices: heaviest first, as every other frame.
    std::vector<uint32_t>& top = tree.nodes[0].children;
    std::sort(top.begin(), top.end(), [&](uint32_t a, uint32_t b) {
      const FlameNode &x = tree.nodes[a], &y = tree.nodes[b];
      if (x.total_ps != y.total_ps) return x.total_ps > y.total_ps;
      return x.name < y.name;
    });
  }
  return tree;
}

}  // namespace jaxprof
