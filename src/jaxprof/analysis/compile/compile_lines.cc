// Finding compile events: which host metadata name one, which lines may hold them (only those
// are decoded), and each line's compile events with how they nest.
#include "jaxprof/analysis/compile/compile_lines.h"

#include <string_view>

#include "jaxprof/analysis/ops/line_filter.h"

namespace jaxprof::compile_detail {
namespace {

bool contains(std::string_view s, std::string_view part) {
  return s.find(part) != std::string_view::npos;
}

// Threads that only compile: every event on them is a compile event.
bool is_compile_thread(std::string_view line_name) {
  return contains(line_name, "Compil") || contains(line_name, "compil") ||
         contains(line_name, "codegen");
}

// What collect_line asks of an event's name, per metadata entry (bits), not per event.
enum NameTrait : uint8_t { kPythonFrame = 1, kListener = 2, kFolded = 4 };

uint8_t name_traits(std::string_view name) {
  return (name.starts_with('$') ? kPythonFrame : 0) |
         (name.starts_with("ThreadpoolListener::") ? kListener : 0) |
         (is_folded_compile_event(name) ? kFolded : 0);
}

}  // namespace

LineIncs collect_line(const Profile& p, uint32_t li, const std::vector<CompileEventClass>& cls,
                      const std::vector<uint8_t>& traits) {
  LineIncs out;
  out.line = li;
  const Line& line = p.lines[li];
  std::string_view lname = p.str(line.name);
  bool compile_thread = is_compile_thread(lname);
  CompilePhase thread_phase =
      contains(lname, "codegen") ? CompilePhase::kCodegen : CompilePhase::kCompileOther;
  const Events& ev = p.events;
  // Stack of open events: (end, index into incs or kNone, anchor for children).
  struct Open {
    int64_t end;
    uint32_t inc;
    uint32_t anchor;
    bool folded;  // inside an event whose detail is folded into it
  };
  std::vector<Open> stack;
  for (uint32_t k = 0; k < line.event_count; ++k) {
    uint32_t e = line.first_event + k;
    int64_t s = ev.start_ps[e], d = ev.duration_ps[e];
    while (!stack.empty() && stack.back().end <= s) stack.pop_back();
    // Each open entry carries the nearest compile event at or above it.
    uint32_t parent = stack.empty() ? kNone : stack.back().inc;
    uint32_t anchor = stack.empty() ? kNone : stack.back().anchor;
    bool folded = !stack.empty() && stack.back().folded;
    uint32_t mi = ev.metadata[e];
    const uint8_t trait = traits[mi];
    const CompileEventClass& c = cls[mi];
    bool include = false;
    CompilePhase ph = c.phase;
    if (d > 0 && !folded && !(trait & kListener)) {
      if (c.kind != CompileEventKind::kNone) {
        include = true;
      } else if (!(trait & kPythonFrame)) {
        if (parent != kNone) {
          const Inc& up = out.incs[parent];
          if (up.kind != CompileEventKind::kJaxStage) {
            include = true;
            ph = up.kind == CompileEventKind::kXlaRoot ? CompilePhase::kHloPasses : up.phase;
          }
        } else if (compile_thread) {
          include = true;
          ph = thread_phase;
        }
      }
    }
    uint32_t inc = kNone;
    if (include) {
      inc = static_cast<uint32_t>(out.incs.size());
      Inc& x = out.incs.emplace_back();
      x.event = e;
      x.start = s;
      x.end = s + d;
      x.phase = ph;
      x.kind = c.kind;
      x.parent = parent;
      x.top = parent == kNone ? inc : out.incs[parent].top;
      x.anchor = anchor;
    }
    // Children of a non-compile event that is not a Python frame anchor to it (PjitFunction(f)).
    uint32_t child_anchor = (!include && !(trait & kPythonFrame)) ? e : anchor;
    const Open open{s + d, inc != kNone ? inc : parent, child_anchor,
                    folded || (inc != kNone && (trait & kFolded))};
    // An entry that tells its children what the one below it tells them (most Python frames of
    // a traced main thread: 287k events a host) need not be kept: it ends within that one.
    if (d > 0 && (open.inc != parent || open.anchor != anchor || open.folded != folded))
      stack.push_back(open);
  }
  return out;
}

CompileClasses classify_lines(const Profile& p) {
  CompileClasses c;
  c.cls.resize(p.event_metadata.size());
  c.traits.resize(p.event_metadata.size());
  c.plane_has_compile.assign(p.planes.size(), 0);
  for (uint32_t mi = 0; mi < p.event_metadata.size(); ++mi) {
    const EventMetadata& m = p.event_metadata[mi];
    if (p.planes[m.plane].kind != PlaneKind::kHostCpu) continue;
    c.cls[mi] = classify_compile_event(p.str(m.name));
    c.traits[mi] = name_traits(p.str(m.name));
    // Only a stage or compiler entry starts a compile: planes without one are never decoded.
    if (c.cls[mi].kind == CompileEventKind::kJaxStage ||
        c.cls[mi].kind == CompileEventKind::kXlaRoot)
      c.plane_has_compile[m.plane] = 1;
  }
  // A line gives compile events only if it is a compiler thread or holds an event of a compile
  // class (collect_line): the host threads that hold neither are not decoded.
  LineFilter compile_events(p), roots(p);
  for (uint32_t mi = 0; mi < p.event_metadata.size(); ++mi) {
    if (c.cls[mi].kind != CompileEventKind::kNone) compile_events.want(mi);
    if (c.cls[mi].kind == CompileEventKind::kJaxStage ||
        c.cls[mi].kind == CompileEventKind::kXlaRoot)
      roots.want(mi);
  }
  c.line_needed.assign(p.lines.size(), 0);
  c.line_roots.assign(p.lines.size(), 0);
  for (uint32_t pi = 0; pi < p.planes.size(); ++pi)
    if (c.plane_has_compile[pi])
      for (uint32_t li : p.planes[pi].lines)
        if (is_compile_thread(p.str(p.lines[li].name)) || compile_events.may_hold(li)) {
          c.line_needed[li] = 1;
          c.line_roots[li] = roots.may_hold(li);
        }
  return c;
}

std::vector<uint32_t> root_lines(const Profile& p, const CompileClasses& c) {
  std::vector<uint32_t> roots;
  for (uint32_t li = 0; li < p.lines.size(); ++li)
    if (c.line_roots[li]) roots.push_back(li);
  return roots;
}

}  // namespace jaxprof::compile_detail
