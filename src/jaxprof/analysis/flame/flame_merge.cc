#include "jaxprof/analysis/flame/flame_merge.h"

#include <algorithm>
#include <string_view>
#include <unordered_map>

namespace jaxprof {
namespace {

struct ChildKey {
  uint32_t parent;
  FrameKind kind;
  std::string_view name;
  bool operator==(const ChildKey&) const = default;
};

struct ChildKeyHash {
  size_t operator()(const ChildKey& k) const {
    return std::hash<std::string_view>{}(k.name) ^
           (static_cast<size_t>(k.parent) * 0x9e3779b97f4a7c15ull) ^ static_cast<size_t>(k.kind);
  }
};

}  // namespace

FlameTree merge_flame_devices(const FlameTree& tree, std::string root_name) {
  FlameTree out;
  out.by = tree.by;
  out.devices = tree.devices;
  for (FlameDevice& d : out.devices) d.node = 0;
  out.warnings = tree.warnings;
  out.nodes.push_back({std::move(root_name), FrameKind::kRoot, 0, 0, 0, 0, {}, 0});
  if (tree.nodes.empty()) return out;

  // Old node -> merged node, parents before children (a walk from the devices' children down).
  std::unordered_map<ChildKey, uint32_t, ChildKeyHash> index;
  std::vector<std::pair<uint32_t, uint32_t>> todo;  // (old node, merged parent)
  for (uint32_t device : tree.nodes[0].children)
    for (uint32_t c : tree.nodes[device].children) todo.push_back({c, 0});
  out.nodes[0].self_ps = 0;
  for (uint32_t device : tree.nodes[0].children) out.nodes[0].self_ps += tree.nodes[device].self_ps;
  while (!todo.empty()) {
    auto [old, parent] = todo.back();
    todo.pop_back();
    const FlameNode& n = tree.nodes[old];
    auto [it, added] =
        index.try_emplace({parent, n.kind, n.name}, static_cast<uint32_t>(out.nodes.size()));
    if (added) {
      FlameNode m;
      m.name = n.name;
      m.kind = n.kind;
      m.parent = parent;
      m.depth = out.nodes[parent].depth + 1;
      out.nodes.push_back(std::move(m));
      out.nodes[parent].children.push_back(it->second);
    }
    out.nodes[it->second].self_ps += n.self_ps;
    for (uint32_t c : n.children) todo.push_back({c, it->second});
  }
  // Totals bottom-up (children come after their parents) and children in display order.
  for (size_t i = out.nodes.size(); i-- > 0;) {
    FlameNode& n = out.nodes[i];
    n.total_ps = n.self_ps;
    for (uint32_t c : n.children) n.total_ps += out.nodes[c].total_ps;
  }
  for (FlameNode& n : out.nodes)
    std::sort(n.children.begin(), n.children.end(), [&](uint32_t a, uint32_t b) {
      const FlameNode &x = out.nodes[a], &y = out.nodes[b];
      if (x.total_ps != y.total_ps) return x.total_ps > y.total_ps;
      return x.name < y.name;
    });
  return out;
}

}  // namespace jaxprof
