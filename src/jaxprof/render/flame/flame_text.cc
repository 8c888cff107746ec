#include "jaxprof/render/flame/flame_text.h"

#include <fmt/format.h>

#include <algorithm>

#include "jaxprof/common/units.h"
#include "jaxprof/render/flame/flame_folded.h"

namespace jaxprof {

const char* frame_kind_name(FrameKind kind) {
  switch (kind) {
    case FrameKind::kRoot:
      return "root";
    case FrameKind::kDevice:
      return "device";
    case FrameKind::kSource:
      return "source";
    case FrameKind::kOpPath:
      return "op-path";
    case FrameKind::kModule:
      return "module";
    case FrameKind::kOp:
      return "op";
    case FrameKind::kIdle:
      return "idle";
  }
  return "?";
}

namespace {

// Nodes under `device` that end a stack (self weight), heaviest first.
std::vector<uint32_t> stacks_of(const FlameTree& t, uint32_t device) {
  std::vector<uint32_t> out, todo = {device};
  while (!todo.empty()) {
    uint32_t n = todo.back();
    todo.pop_back();
    if (n != device && t.nodes[n].self_ps > 0) out.push_back(n);
    for (uint32_t c : t.nodes[n].children) todo.push_back(c);
  }
  std::sort(out.begin(), out.end(), [&](uint32_t a, uint32_t b) {
    if (t.nodes[a].self_ps != t.nodes[b].self_ps) return t.nodes[a].self_ps > t.nodes[b].self_ps;
    // By the frames, not the node ids: the order frames were made in depends on how the hosts
    // were read (one profile, or partials).
    return t.stack(a) < t.stack(b);
  });
  return out;
}

std::string joined(const FlameTree& t, uint32_t node, std::string_view sep, bool folded) {
  std::vector<std::string_view> frames = t.stack(node);
  std::string out;
  for (size_t i = 1; i < frames.size(); ++i) {  // frames[0] is the device
    if (i > 1) out += sep;
    out += folded ? folded_frame(frames[i]) : std::string(frames[i]);
  }
  return out;
}

double share(int64_t part, int64_t whole) {
  return whole > 0 ? static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

std::string table(const FlameTree& t, size_t top) {
  std::string out;
  for (const FlameDevice& d : t.devices) {
    out +=
        fmt::format("{} ({})  busy {}  span {}  {} op events  by {}", d.device, d.host,
                    human_duration(static_cast<double>(d.busy_ps)),
                    human_duration(static_cast<double>(d.span_ps)), d.events, flame_by_name(t.by));
    if (d.has_modules)
      out += fmt::format("  idle during modules {}  between modules {}",
                         human_duration(static_cast<double>(d.idle_during_modules_ps)),
                         human_duration(static_cast<double>(d.idle_between_modules_ps)));
    else if (d.has_idle)
      out += fmt::format("  idle {} (module executions unknown)",
                         human_duration(static_cast<double>(d.idle_between_modules_ps)));
    out += "\n";
    Table tab(
        {{"time", Measure::kDuration}, {"share", Measure::kShare}, {"stack (outermost first)"}});
    int64_t whole = t.nodes[d.node].total_ps;
    std::vector<uint32_t> stacks = stacks_of(t, d.node);
    size_t shown = top > 0 ? std::min(top, stacks.size()) : stacks.size();
    for (size_t i = 0; i < shown; ++i) {
      uint32_t n = stacks[i];
      tab.add({t.nodes[n].self_ps, share(t.nodes[n].self_ps, whole), joined(t, n, " > ", false)});
    }
    out += tab.render(160);
    if (shown < stacks.size()) out += more_rows_line(shown, stacks.size(), "stacks");
    out += "\n";
  }
  if (t.devices.empty())
    out += "no device op events found (try `jaxprof info` to see what the profile holds)\n";
  return out;
}

std::string csv(const FlameTree& t, size_t top) {
  std::string out = "device,host,stack,self_ns,share\n";
  for (const FlameDevice& d : t.devices) {
    int64_t whole = t.nodes[d.node].total_ps;
    std::vector<uint32_t> stacks = stacks_of(t, d.node);
    size_t shown = top > 0 ? std::min(top, stacks.size()) : stacks.size();
    for (size_t i = 0; i < shown; ++i) {
      uint32_t n = stacks[i];
      out += fmt::format("{},{},{},{},{}\n", csv_field(d.device), csv_field(d.host),
                         csv_field(joined(t, n, ";", true)), ps_to_ns_exact(t.nodes[n].self_ps),
                         number(share(t.nodes[n].self_ps, whole)));
    }
  }
  return out;
}

void json_node(const FlameTree& t, uint32_t id, std::string& out) {
  const FlameNode& n = t.nodes[id];
  out += fmt::format("{{\"name\": {}, \"kind\": \"{}\", \"total_ns\": {}, \"self_ns\": {}",
                     json_string(n.name), frame_kind_name(n.kind), ps_to_ns_exact(n.total_ps),
                     ps_to_ns_exact(n.self_ps));
  if (!n.children.empty()) {
    out += ", \"children\": [";
    for (size_t i = 0; i < n.children.size(); ++i) {
      if (i) out += ", ";
      json_node(t, n.children[i], out);
    }
    out += "]";
  }
  out += "}";
}

std::string json(const FlameTree& t) {
  // Sized up front from the names: grown by doubling, the text of a tree of 8,000 devices (43
  // MB at 1,000 hosts) held up to three times its size while it was copied.
  size_t estimate = 256 + 320 * t.devices.size();
  for (const FlameNode& n : t.nodes) estimate += n.name.size() + 112;
  std::string out;
  out.reserve(estimate);
  out += fmt::format("{{\"by\": {}, \"devices\": [", json_string(flame_by_name(t.by)));
  for (size_t i = 0; i < t.devices.size(); ++i) {
    const FlameDevice& d = t.devices[i];
    if (i) out += ", ";
    out += fmt::format(
        "{{\"device\": {}, \"host\": {}, \"frame\": {}, \"busy_ns\": {}, \"span_ns\": {}, "
        "\"events\": {}, \"idle_ns\": {}, \"idle_during_modules_ns\": {}, "
        "\"idle_between_modules_ns\": {}}}",
        json_string(d.device), json_string(d.host), json_string(t.nodes[d.node].name),
        ps_to_ns_exact(d.busy_ps), ps_to_ns_exact(d.span_ps), d.events,
        d.has_idle ? ps_to_ns_exact(d.idle_during_modules_ps + d.idle_between_modules_ps) : "null",
        d.has_modules ? ps_to_ns_exact(d.idle_during_modules_ps) : "null",
        d.has_modules ? ps_to_ns_exact(d.idle_between_modules_ps) : "null");
  }
  out += "], \"tree\": ";
  json_node(t, 0, out);
  out += ", \"warnings\": " + json_string_array(t.warnings);
  out += "}\n";
  return out;
}

}  // namespace

std::string render_flame(const FlameTree& tree, OutputFormat format, size_t top) {
  switch (format) {
    case OutputFormat::kJson:
      return json(tree);
    case OutputFormat::kCsv:
      return csv(tree, top);
    case OutputFormat::kTable:
      return table(tree, top);
  }
  return {};
}

}  // namespace jaxprof
