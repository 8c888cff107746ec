// Building a FlameTree frame by frame: shared by compute_flame (from a profile's events) and
// flame_from_partials (from the stacks partials keep), so that both make the same tree.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "jaxprof/analysis/flame/flame.h"

namespace jaxprof {

struct FlameFrame {
  FlameFrame(std::string n, FrameKind k, uint32_t m = 0) : name(std::move(n)), kind(k), module(m) {}
  std::string name;
  FrameKind kind;
  uint32_t module;  // module frames: the module (FlameNode::module)
};
using FlamePath = std::vector<FlameFrame>;

class FlameTreeBuilder {
 public:
  explicit FlameTreeBuilder(FlameTree& t) : t_(t) {
    t_.nodes.clear();
    t_.nodes.push_back({"all", FrameKind::kRoot, 0, 0, 0, 0, {}, 0});
    index_.emplace_back();
  }

  uint32_t child(uint32_t parent, std::string_view name, FrameKind kind, uint32_t module = 0) {
    auto& children = index_[parent];
    auto it = children.find(std::string(name));
    if (it != children.end()) return it->second;
    uint32_t id = static_cast<uint32_t>(t_.nodes.size());
    FlameNode n;
    n.name = std::string(name);
    n.kind = kind;
    n.parent = parent;
    n.depth = t_.nodes[parent].depth + 1;
    n.module = module;
    t_.nodes.push_back(std::move(n));
    t_.nodes[parent].children.push_back(id);
    index_.emplace_back();
    index_[parent].emplace(std::string(name), id);
    return id;
  }

  void add(uint32_t from, const FlamePath& path, int64_t weight) {
    if (weight <= 0) return;  // no empty frames
    uint32_t n = from;
    for (const FlameFrame& f : path) n = child(n, f.name, f.kind, f.module);
    t_.nodes[n].self_ps += weight;
  }

  // Totals bottom-up (children always come after their parent) and children in display order.
  void finish() {
    for (size_t i = t_.nodes.size(); i-- > 0;) {
      FlameNode& n = t_.nodes[i];
      n.total_ps = n.self_ps;
      for (uint32_t c : n.children) n.total_ps += t_.nodes[c].total_ps;
    }
    // Devices stay in the order they were added (natural order); other frames heaviest first.
    for (FlameNode& n : t_.nodes)
      if (n.kind != FrameKind::kRoot)
        std::sort(n.children.begin(), n.children.end(), [&](uint32_t a, uint32_t b) {
          const FlameNode &x = t_.nodes[a], &y = t_.nodes[b];
          if (x.total_ps != y.total_ps) return x.total_ps > y.total_ps;
          return x.name < y.name;
        });
  }

 private:
  FlameTree& t_;
  std::vector<std::unordered_map<std::string, uint32_t>> index_;  // per node: child by name
};

// A device's frame: several hosts each have a /device:GPU:0, so the host keeps them apart.
inline std::string flame_device_frame(const FlameDevice& d, bool several_hosts) {
  return several_hosts ? d.host + d.device : d.device;
}

// The device's idle frames (with FlameOptions::idle): busy + idle = span exactly.
inline void add_idle_frames(FlameTreeBuilder& builder, const FlameDevice& fd) {
  if (!fd.has_idle) return;
  if (fd.has_modules) {
    builder.add(fd.node, {{"[idle during modules]", FrameKind::kIdle}}, fd.idle_during_modules_ps);
    builder.add(fd.node, {{"[idle between modules]", FrameKind::kIdle}},
                fd.idle_between_modules_ps);
  } else {
    builder.add(fd.node, {{"[idle]", FrameKind::kIdle}}, fd.idle_between_modules_ps);
  }
  if (fd.set_apart_ps > 0)
    builder.add(fd.node, {{"[set apart]", FrameKind::kIdle}}, fd.set_apart_ps);
}

}  // namespace jaxprof
