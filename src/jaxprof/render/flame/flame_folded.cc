#include "jaxprof/render/flame/flame_folded.h"

#include <fmt/format.h>

namespace jaxprof {

std::string folded_frame(std::string_view name) {
  std::string out(name);
  for (char& c : out) {
    if (c == ';') c = ':';
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  }
  return out;
}

std::string render_flame_folded(const FlameTree& tree) {
  std::string out;
  // Depth-first with an explicit stack: names of the current path kept in `prefix` pieces.
  struct Item {
    uint32_t node;
    size_t prefix_len;
  };
  std::string prefix;
  std::vector<Item> todo;
  for (auto it = tree.nodes[0].children.rbegin(); it != tree.nodes[0].children.rend(); ++it)
    todo.push_back({*it, 0});
  while (!todo.empty()) {
    Item item = todo.back();
    todo.pop_back();
    const FlameNode& n = tree.nodes[item.node];
    prefix.resize(item.prefix_len);
    if (!prefix.empty()) prefix += ';';
    prefix += folded_frame(n.name);
    if (n.self_ps > 0) out += fmt::format("{} {}\n", prefix, n.self_ps);
    size_t len = prefix.size();
    for (auto it = n.children.rbegin(); it != n.children.rend(); ++it) todo.push_back({*it, len});
  }
  return out;
}

}  // namespace jaxprof
