#include "jaxprof/render/flame/flame_speedscope.h"

#include <fmt/format.h>

#include <unordered_map>

#include "jaxprof/render/text/text.h"
#include "jaxprof/common/units.h"

namespace jaxprof {

std::string render_flame_speedscope(const FlameTree& t) {
  // Frames are shared between profiles and deduplicated by name.
  std::unordered_map<std::string_view, size_t> frame_ids;
  std::vector<std::string_view> frames;
  auto frame_id = [&](std::string_view name) {
    auto [it, inserted] = frame_ids.try_emplace(name, frames.size());
    if (inserted) frames.push_back(name);
    return it->second;
  };

  std::string profiles;
  for (size_t di = 0; di < t.devices.size(); ++di) {
    const FlameDevice& d = t.devices[di];
    const FlameNode& dev = t.nodes[d.node];
    std::string samples, weights;
    // Depth-first; a sample is the path below the device frame to a node with self weight.
    std::vector<std::pair<uint32_t, size_t>> todo;  // (node, depth below the device)
    std::vector<size_t> path;
    for (auto it = dev.children.rbegin(); it != dev.children.rend(); ++it) todo.push_back({*it, 0});
    while (!todo.empty()) {
      auto [id, depth] = todo.back();
      todo.pop_back();
      const FlameNode& n = t.nodes[id];
      path.resize(depth);
      path.push_back(frame_id(n.name));
      if (n.self_ps > 0) {
        if (!samples.empty()) {
          samples += ", ";
          weights += ", ";
        }
        samples += "[";
        for (size_t i = 0; i < path.size(); ++i)
          samples += (i ? ", " : "") + std::to_string(path[i]);
        samples += "]";
        weights += ps_to_ns_exact(n.self_ps);
      }
      for (auto it = n.children.rbegin(); it != n.children.rend(); ++it)
        todo.push_back({*it, depth + 1});
    }
    if (di) profiles += ", ";
    profiles += fmt::format(
        "{{\"type\": \"sampled\", \"name\": {}, \"unit\": \"nanoseconds\", \"startValue\": 0, "
        "\"endValue\": {}, \"samples\": [{}], \"weights\": [{}]}}",
        json_string(dev.name), ps_to_ns_exact(dev.total_ps), samples, weights);
  }
  std::string frame_list;
  for (size_t i = 0; i < frames.size(); ++i)
    frame_list += (i ? ", " : "") + fmt::format("{{\"name\": {}}}", json_string(frames[i]));
  return fmt::format(
      "{{\"$schema\": \"https://www.speedscope.app/file-format-schema.json\", \"name\": "
      "{}, \"exporter\": \"jaxprof\", \"activeProfileIndex\": 0, \"shared\": {{\"frames\": "
      "[{}]}}, \"profiles\": [{}]}}\n",
      json_string(fmt::format("jaxprof flame --by {}", flame_by_name(t.by))), frame_list, profiles);
}

}  // namespace jaxprof
