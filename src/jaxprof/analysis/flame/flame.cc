#include "jaxprof/analysis/flame/flame.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <unordered_map>

#include "jaxprof/analysis/timeline/busy_share.h"
#include "jaxprof/analysis/ops/device_events.h"
#include "jaxprof/analysis/ops/event_filter.h"
#include "jaxprof/analysis/flame/flame_builder.h"
#include "jaxprof/analysis/timeline/intervals.h"
#include "jaxprof/analysis/steps/module_executions.h"

namespace jaxprof {

const char* flame_by_name(FlameBy by) {
  switch (by) {
    case FlameBy::kSource:
      return "source";
    case FlameBy::kOpName:
      return "op-name";
    case FlameBy::kModule:
      return "module";
  }
  return "?";
}

bool parse_flame_by(std::string_view text, FlameBy& out) {
  for (FlameBy by : {FlameBy::kSource, FlameBy::kOpName, FlameBy::kModule}) {
    if (text == flame_by_name(by)) {
      out = by;
      return true;
    }
  }
  return false;
}

namespace {

// Splits at the `sep` characters outside (), [] and {}; empty parts are dropped.
std::vector<std::string_view> split_top_level(std::string_view text, char sep) {
  std::vector<std::string_view> out;
  int depth = 0;
  size_t begin = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    char c = i < text.size() ? text[i] : sep;
    if (c == '(' || c == '[' || c == '{') {
      ++depth;
    } else if (c == ')' || c == ']' || c == '}') {
      depth = std::max(0, depth - 1);  // unbalanced text must not hide every later separator
    } else if (c == sep && (depth == 0 || i == text.size())) {
      if (i > begin) out.push_back(text.substr(begin, i - begin));
      begin = i + 1;
    }
  }
  return out;
}

}  // namespace

std::vector<std::string_view> split_op_path(std::string_view op_name) {
  return split_top_level(op_name, '/');
}

std::vector<std::string_view> split_op_names(std::string_view op_name) {
  return split_top_level(op_name, ';');
}

std::vector<std::string_view> FlameTree::stack(uint32_t node) const {
  std::vector<std::string_view> out;
  for (uint32_t n = node; n != 0; n = nodes[n].parent) out.push_back(nodes[n].name);
  std::reverse(out.begin(), out.end());
  return out;
}

namespace {

using Frame = FlameFrame;
using Path = FlamePath;

// An op as the flamegraph keys it: module index plus the hlo_op (or, for events without one,
// the display name, kept apart by a flag bit).
uint64_t op_key(uint32_t module, StringId name, bool by_event_name) {
  return (static_cast<uint64_t>(module) << 33) | (static_cast<uint64_t>(by_event_name) << 32) |
         name;
}

bool has_metadata(const HloInstruction& in) {
  return !in.op_name.empty() || !in.source_file.empty() || in.stack_frame_id != 0;
}

// The instructions a fusion's kernel is charged to: those of its fused computation that carry
// metadata, nested fusions opened. Compiler-made instructions (parameters, bitcasts) carry none.
void fused_leaves(const HloModule& m, const HloInstruction& fusion, int depth,
                  std::vector<const HloInstruction*>& out) {
  for (int64_t cid : fusion.called_computation_ids) {
    auto it = m.computation_by_id.find(cid);
    if (it == m.computation_by_id.end()) continue;
    for (uint32_t ii : m.computations[it->second].instructions) {
      const HloInstruction& in = m.instructions[ii];
      if (in.opcode == "fusion" && depth < 16) {
        size_t before = out.size();
        fused_leaves(m, in, depth + 1, out);
        if (out.size() > before) continue;
      }
      if (has_metadata(in)) out.push_back(&in);
    }
  }
}

std::string source_frame(const HloStackFrame& f) {
  if (f.function.empty()) return fmt::format("{}:{}", f.file, f.line);
  return fmt::format("{} ({}:{})", f.function, f.file, f.line);
}

class Resolver {
 public:
  // `used` marks the modules that op events name (indices into Profile::modules).
  Resolver(const Profile& p, FlameBy by, const std::vector<uint8_t>& used) : p_(p), by_(by) {
    std::unordered_map<StringId, int> uses;
    for (size_t i = 1; i < p.modules.size(); ++i)
      if (used[i]) ++uses[p.modules[i].name];
    for (size_t i = 0; i < p.modules.size(); ++i) {
      const ModuleKey& k = p.modules[i];
      if (i == 0 || k.name == 0)
        module_frames_.push_back("(no module)");
      else  // JAX reuses module names (jit_dot compiled six times): the program id tells apart
        module_frames_.push_back(uses[k.name] > 1 ? p.module_label(static_cast<uint32_t>(i))
                                                  : std::string(p.str(k.name)));
    }
  }

  // The stacks one op's time is split over, equally (under the device frame).
  std::vector<Path> paths(uint32_t module, StringId name, bool by_event_name, uint32_t plane,
                          uint32_t event) const {
    Frame op{std::string(p_.str(name)), FrameKind::kOp};
    if (by_ == FlameBy::kModule) return {{{module_frames_[module], FrameKind::kModule, module}, op}};

    const ModuleKey& mk = p_.modules[module];
    const HloModule* mod =
        module == 0 ? nullptr : p_.hlo.find(hlo_program_key(mk.program_id), p_.str(mk.name));
    const HloInstruction* instr = mod && !by_event_name ? mod->find(p_.str(name)) : nullptr;
    std::vector<const HloInstruction*> leaves;
    if (instr && instr->opcode == "fusion") fused_leaves(*mod, *instr, 0, leaves);
    if (leaves.empty()) leaves.push_back(instr);  // may be null: the op alone

    std::vector<Path> out;
    for (const HloInstruction* in : leaves) {
      if (by_ == FlameBy::kSource) {
        out.push_back(source_path(mod, in));
      } else {
        std::string stat;
        std::vector<std::string_view> names = split_op_names(op_name(in, plane, event, stat));
        if (names.empty()) out.emplace_back();
        for (std::string_view name : names) {  // merged instructions: each name a share
          Path& path = out.emplace_back();
          for (std::string_view part : split_op_path(name))
            path.push_back({std::string(part), FrameKind::kOpPath});
        }
      }
    }
    for (Path& path : out) path.push_back(op);
    return out;
  }

 private:
  Path source_path(const HloModule* mod, const HloInstruction* in) const {
    Path path;
    if (!in) return path;
    std::vector<const HloStackFrame*> frames = mod->stack(*in);  // innermost first
    for (auto it = frames.rbegin(); it != frames.rend(); ++it)
      if (!(*it)->file.empty() || !(*it)->function.empty())
        path.push_back({source_frame(**it), FrameKind::kSource});
    if (path.empty() && !in->source_file.empty())
      path.push_back({fmt::format("{}:{}", in->source_file, in->source_line), FrameKind::kSource});
    return path;
  }

  // The JAX op path of the instruction, else of the event's tf_op stat (GPU kernels carry it
  // there; "XlaModule:" is a placeholder). `storage` keeps a stat's text alive.
  std::string_view op_name(const HloInstruction* in, uint32_t plane, uint32_t event,
                           std::string& storage) const {
    if (in && !in->op_name.empty()) return in->op_name;
    if (auto v = p_.event_stat(plane, event, "tf_op"); v && v->is_text()) {
      storage = std::string(v->str);
      if (storage.ends_with(':')) storage.pop_back();
      if (storage.find('/') != std::string::npos) return storage;
    }
    return {};
  }

  const Profile& p_;
  FlameBy by_;
  std::vector<std::string> module_frames_;  // per Profile::modules index
};

// Idle time in the device's span [first, last): inside a module execution (clipped to the span)
// or outside all of them. `busy` is the device's op intervals (merged here).
// `roles` and `set_apart` (the device's time set apart, disjoint from its steady executions) may
// be empty.
void split_idle(std::vector<Interval>& busy, int64_t first, int64_t last,
                const DeviceExecutions* executions, const SteadyState& steady,
                const std::vector<ExecutionRole>& roles, const std::vector<Interval>& set_apart,
                FlameDevice& fd) {
  merge_intervals(busy);
  int64_t busy_ps = 0;
  for (const Interval& b : busy) busy_ps += b.length();
  fd.has_idle = true;
  std::vector<Interval> apart;
  for (const Interval& i : set_apart)
    if (i.end > first && i.begin < last)
      apart.push_back({std::max(i.begin, first), std::min(i.end, last)});
  fd.set_apart_ps = 0;
  for (const Interval& i : subtract_intervals(apart, busy)) fd.set_apart_ps += i.length();
  std::vector<Interval> modules;
  if (executions)
    for (size_t k = 0; k < executions->executions.size(); ++k) {
      if (k < roles.size() && steady.sets_apart(roles[k])) continue;
      const ModuleExecution& x = executions->executions[k];
      Interval in{std::max(x.start_ps, first), std::min(x.end_ps, last)};
      if (in.end > in.begin) modules.push_back(in);
    }
  fd.has_modules = executions && executions->source != ExecutionSource::kNone;
  if (!fd.has_modules) {
    fd.idle_between_modules_ps = (last - first) - busy_ps - fd.set_apart_ps;
    return;
  }
  merge_intervals(modules);
  int64_t module_ps = 0;
  for (const Interval& m : modules) module_ps += m.length();
  int64_t both = intersection_length(modules, busy);
  fd.idle_during_modules_ps = module_ps - both;
  fd.idle_between_modules_ps = (last - first) - module_ps - busy_ps + both - fd.set_apart_ps;
}

}  // namespace

FlameTree compute_flame(const Profile& p, const FlameOptions& options) {
  EventFilterSpec spec;
  spec.device = options.device;
  EventFilter filter(spec);
  FlameTree tree;
  tree.by = options.by;
  FlameTreeBuilder builder(tree);

  std::vector<DeviceLines> devices = op_devices(p);
  // Every device's lines, even with --device: module frames are the module name, with the
  // program id only where op events name several programs of that name, decided over all
  // devices so that --device does not change the labels.
  std::vector<uint32_t> all_lines;
  for (const DeviceLines& dev : devices)
    all_lines.insert(all_lines.end(), dev.lines.begin(), dev.lines.end());
  p.require_lines(all_lines);
  // One per op_devices() entry, same order.
  const std::vector<DeviceExecutions>& executions = module_executions(p);
  const SteadyState& steady = steady_state(p, options.steady);
  static const SteadyStateTime kNoTime;
  const SteadyStateTime& steady_time =
      options.idle ? steady_state_time(p, options.steady) : kNoTime;
  std::vector<uint8_t> used(p.modules.size(), 0);
  for (const DeviceLines& dev : devices)
    for (uint32_t li : dev.lines)
      for (uint32_t e = p.lines[li].first_event;
           e < p.lines[li].first_event + p.lines[li].event_count; ++e)
        if (dev.counts(p.events, e)) used[p.events.module[e]] = 1;
  Resolver resolver(p, options.by, used);

  const Events& ev = p.events;
  for (size_t di = 0; di < devices.size(); ++di) {
    const DeviceLines& dev = devices[di];
    if (!filter.keeps_device(dev.name)) continue;
    FlameDevice fd;
    fd.device = dev.name;
    fd.host = p.hosts[p.planes[dev.plane].host].name;
    int64_t first = std::numeric_limits<int64_t>::max(), last = std::numeric_limits<int64_t>::min();
    std::vector<Interval> busy;
    for (uint32_t li : dev.lines) {
      const Line& line = p.lines[li];
      for (uint32_t e = line.first_event; e < line.first_event + line.event_count; ++e) {
        if (!dev.counts(ev, e) || steady.set_apart(e)) continue;
        ++fd.events;
        first = std::min(first, ev.start_ps[e]);
        last = std::max(last, ev.end_ps(e));
        if (options.idle) busy.push_back({ev.start_ps[e], ev.end_ps(e)});
      }
    }
    if (fd.events == 0) continue;
    fd.span_ps = last - first;
    if (options.idle) {
      static const std::vector<Interval> kNothing;
      split_idle(busy, first, last, di < executions.size() ? &executions[di] : nullptr, steady,
                 steady.roles[di],
                 di < steady_time.set_apart.size() ? steady_time.set_apart[di] : kNothing, fd);
    }

    struct Acc {
      int64_t weight = 0;
      uint32_t event = 0;  // a representative, for stat lookups
    };
    std::unordered_map<uint64_t, Acc> ops;
    share_busy_time(
        ev, p.lines, dev.lines,
        [&](uint32_t e) { return dev.counts(ev, e) && !steady.set_apart(e); },
        [&](uint32_t e, int64_t ps) {
          const EventMetadata& m = p.event_metadata[ev.metadata[e]];
          bool by_name = ev.hlo_op[e] == 0;
          StringId name = !by_name ? ev.hlo_op[e] : (m.display_name != 0 ? m.display_name : m.name);
          Acc& a = ops[op_key(ev.module[e], name, by_name)];
          if (a.weight == 0) a.event = e;
          a.weight += ps;
          fd.busy_ps += ps;
        });

    if (fd.has_idle) {
      // On the device clock the busy time may differ a little from the timeline's union: idle
      // frames take what is left of the span, so that busy + idle = span still holds. The time
      // set apart has its own frame, and is no idle besides.
      fd.set_apart_ps = std::min(fd.set_apart_ps, std::max<int64_t>(0, fd.span_ps - fd.busy_ps));
      int64_t idle = std::max<int64_t>(0, fd.span_ps - fd.busy_ps - fd.set_apart_ps);
      fd.idle_during_modules_ps = std::min(fd.idle_during_modules_ps, idle);
      fd.idle_between_modules_ps = idle - fd.idle_during_modules_ps;
    }
    // Several hosts each have a /device:GPU:0: the host keeps their frames apart.
    fd.op_device = static_cast<uint32_t>(di);
    fd.node = builder.child(0, flame_device_frame(fd, p.hosts.size() > 1), FrameKind::kDevice);
    // Keys in a fixed order, so that the picoseconds left over by equal splits always go to the
    // same stacks.
    std::vector<uint64_t> keys;
    keys.reserve(ops.size());
    for (const auto& [k, a] : ops) keys.push_back(k);
    std::sort(keys.begin(), keys.end());
    add_idle_frames(builder, fd);
    for (uint64_t k : keys) {
      const Acc& a = ops[k];
      uint32_t module = static_cast<uint32_t>(k >> 33);
      bool by_name = (k >> 32) & 1;
      std::vector<Path> paths =
          resolver.paths(module, static_cast<StringId>(k), by_name, dev.plane, a.event);
      int64_t n = static_cast<int64_t>(paths.size());
      int64_t q = a.weight / n, r = a.weight % n;
      for (int64_t i = 0; i < n; ++i) builder.add(fd.node, paths[i], q + (i < r ? 1 : 0));
    }
    tree.devices.push_back(std::move(fd));
  }
  builder.finish();
  return tree;
}

}  // namespace jaxprof
