// Each host's compiles, read from a profile: the windows that make one compile (a cache miss's
// JAX stages, or an XLA compile entry outside them), the compile events of every thread attributed
// to them by time, and each compile's record: its events and steps, the time of its phases
// (compile_wall.cc) and its module.
#include "jaxprof/analysis/compile/compile_records.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>

#include "jaxprof/analysis/compile/compile.h"
#include "jaxprof/analysis/compile/compile_lines.h"
#include "jaxprof/analysis/compile/compile_wall.h"
#include "jaxprof/analysis/ops/line_filter.h"
#include "jaxprof/analysis/partial/partial_build.h"

namespace jaxprof {
namespace compile_detail {

std::vector<CompilePhaseTime> empty_phases() {
  std::vector<CompilePhaseTime> v(kCompilePhaseCount);
  for (int i = 0; i < kCompilePhaseCount; ++i) v[i].phase = static_cast<CompilePhase>(i);
  return v;
}

void sort_steps(std::vector<CompileStepTime>& steps) {
  std::sort(steps.begin(), steps.end(), [](const CompileStepTime& a, const CompileStepTime& b) {
    if (a.wall_ps != b.wall_ps) return a.wall_ps > b.wall_ps;
    if (a.thread_ps != b.thread_ps) return a.thread_ps > b.thread_ps;
    return a.name < b.name;
  });
}

namespace {

std::string_view function_of(std::string_view anchor_name) {
  constexpr std::string_view kPjit = "PjitFunction(";
  if (anchor_name.starts_with(kPjit) && anchor_name.ends_with(')'))
    return anchor_name.substr(kPjit.size(), anchor_name.size() - kPjit.size() - 1);
  return {};
}

// "spmd-partitioner (jit_global_sse)" -> "jit_global_sse"
std::string_view name_suffix(std::string_view name) {
  if (!name.ends_with(')')) return {};
  size_t open = name.rfind(" (");
  if (open == std::string_view::npos) return {};
  return name.substr(open + 2, name.size() - open - 3);
}

// What may name a compile's module: a module the profile knows, or a jit_ or pmap_ name.
class ModuleNames {
 public:
  explicit ModuleNames(const Profile& p) {
    for (const ModuleKey& m : p.modules)
      if (m.name != 0) known_.insert(p.str(m.name));
    for (const auto& m : p.hlo.modules()) known_.insert(m->name);
  }
  bool known(std::string_view s) const { return known_.count(s) > 0; }
  bool is_module_name(std::string_view s) const {
    if (s.empty()) return false;
    return known(s) || s.starts_with("jit_") || s.starts_with("pmap_");
  }

 private:
  std::unordered_set<std::string_view> known_;
};

// The lines that may hold an event named after a module ("... (jit_f)"), Python frames aside.
LineFilter module_suffix_lines(const Profile& p, const CompileClasses& c,
                               const ModuleNames& names) {
  LineFilter module_suffixes(p);
  for (uint32_t mi = 0; mi < p.event_metadata.size(); ++mi)
    if (c.cls[mi].kind != CompileEventKind::kNone ||
        !p.str(p.event_metadata[mi].name).starts_with('$'))
      if (names.is_module_name(name_suffix(p.str(p.event_metadata[mi].name))))
        module_suffixes.want(mi);
  return module_suffixes;
}

// One plane's compile events, line by line (lines without any left out).
struct PlaneIncs {
  uint32_t plane = 0;
  std::vector<LineIncs> lines;
  std::vector<uint32_t> line_pos;  // of lines[L] in the plane
  // Plane positions of the first needed line not used whose events may name a module by a
  // stat (none when the plane declares no such stat), and of the first such line that may
  // hold a pass named after a module.
  uint32_t first_unused = kNone, first_unused_suffix = kNone;
};

PlaneIncs collect_plane(const Profile& p, const CompileClasses& c, uint32_t pi,
                        const std::vector<uint8_t>& line_used, const LineFilter& module_suffixes) {
  const Plane& plane = p.planes[pi];
  PlaneIncs out;
  out.plane = pi;
  bool stats_may_name = false;
  for (std::string_view sn : {"hlo_module", "module", "name"})
    stats_may_name |= p.plane_may_have_stat(pi, sn);
  for (uint32_t k = 0; k < plane.lines.size(); ++k) {
    uint32_t li = plane.lines[k];
    if (!line_used[li]) {
      if (c.line_needed[li]) {
        if (stats_may_name) out.first_unused = std::min(out.first_unused, k);
        if (module_suffixes.may_hold(li))
          out.first_unused_suffix = std::min(out.first_unused_suffix, k);
      }
      continue;
    }
    LineIncs l = collect_line(p, li, c.cls, c.traits);
    if (!l.incs.empty()) {
      out.lines.push_back(std::move(l));
      out.line_pos.push_back(k);
    }
  }
  return out;
}

// One compile: the time from its first stage's start to its last one's end, on one line.
struct Window {
  uint32_t plane = 0;
  uint32_t line = 0;  // index into the plane's LineIncs
  int64_t start = 0, end = 0;
  std::vector<uint32_t> roots;  // tops on the launching line
  uint32_t anchor = kNone;
  // (line index, top index) of worker events attributed to it
  std::vector<std::pair<uint32_t, uint32_t>> worker_tops;
};

// The windows of one plane's compiles, by start: outermost JAX stages, merged when they share the
// enclosing call (one cache miss runs trace, lower and backend_compile inside one
// PjitFunction(f)), and XLA compiles outside any JAX stage (no annotations, or a C++ caller).
std::vector<Window> find_windows(const PlaneIncs& plane, PartialCompile& host) {
  const std::vector<LineIncs>& lines = plane.lines;
  std::vector<Window> windows;
  for (uint32_t L = 0; L < lines.size(); ++L) {
    const auto& incs = lines[L].incs;
    size_t last = kNone;
    for (uint32_t i = 0; i < incs.size(); ++i) {
      const Inc& x = incs[i];
      if (x.top != i || x.kind != CompileEventKind::kJaxStage) continue;
      host.saw_stage = true;
      if (last != kNone && x.anchor != kNone && x.anchor == windows[last].anchor) {
        windows[last].roots.push_back(i);
        windows[last].end = std::max(windows[last].end, x.end);
        continue;
      }
      last = windows.size();
      Window& w = windows.emplace_back();
      w.plane = plane.plane;
      w.line = L;
      w.start = x.start;
      w.end = x.end;
      w.roots = {i};
      w.anchor = x.anchor;
    }
  }
  auto by_start = [](const Window& a, const Window& b) { return a.start < b.start; };
  std::sort(windows.begin(), windows.end(), by_start);
  size_t jax_windows = windows.size();
  for (uint32_t L = 0; L < lines.size(); ++L) {
    const auto& incs = lines[L].incs;
    for (uint32_t i = 0; i < incs.size(); ++i) {
      const Inc& x = incs[i];
      if (x.top != i || x.kind != CompileEventKind::kXlaRoot) continue;
      bool inside = false;
      for (size_t w = 0; w < jax_windows && !inside; ++w)
        inside = windows[w].start <= x.start && x.start < windows[w].end;
      if (inside) continue;
      Window& w = windows.emplace_back();
      w.plane = plane.plane;
      w.line = L;
      w.start = x.start;
      w.end = x.end;
      w.roots = {i};
    }
  }
  std::sort(windows.begin(), windows.end(), by_start);
  return windows;
}

// Attributes every other top-level compile event to the window it starts in by time containment
// (the latest-starting one that contains it); the host counts those in none.
void attribute_tops(const PlaneIncs& plane, std::vector<Window>& windows, PartialCompile& host) {
  auto window_at = [&](int64_t t) -> Window* {
    Window* found = nullptr;
    for (Window& w : windows) {
      if (w.start > t) break;
      if (t < w.end) found = &w;
    }
    return found;
  };
  std::vector<std::unordered_set<uint32_t>> root_sets(windows.size());
  for (size_t w = 0; w < windows.size(); ++w)
    root_sets[w].insert(windows[w].roots.begin(), windows[w].roots.end());
  for (uint32_t L = 0; L < plane.lines.size(); ++L) {
    const auto& incs = plane.lines[L].incs;
    for (uint32_t i = 0; i < incs.size(); ++i) {
      if (incs[i].top != i) continue;
      Window* w = window_at(incs[i].start);
      if (w == nullptr) {
        ++host.unattributed;
        continue;
      }
      size_t wi = static_cast<size_t>(w - windows.data());
      if (w->line == L && root_sets[wi].count(i)) continue;
      w->worker_tops.push_back({L, i});
    }
  }
}

// One compile's record from its window: its events and steps, each thread's self time and the
// partition of the wall time (unless totals only), and its module.
class CompileBuilder {
 public:
  CompileBuilder(const Profile& p, const PlaneIncs& plane, const ModuleNames& names,
                 const Window& w, bool totals_only)
      : p_(p),
        plane_(plane),
        names_(names),
        w_(w),
        totals_only_(totals_only),
        steps_(p, plane.lines, rec_) {}

  // Clears `settled` when the module might be named differently had the needed lines that are
  // not used been read too.
  CompileRecord build(bool& settled);

 private:
  std::vector<LineSegs> walk_members();
  void split_wall(std::vector<LineSegs>& segs);
  void name_by_entry(bool& settled);
  void name_by_stats(bool& settled);

  const Profile& p_;
  const PlaneIncs& plane_;
  const ModuleNames& names_;
  const Window& w_;
  const bool totals_only_;
  CompileRecord rec_;
  CompileSteps steps_;
  // Members per line: the tops attributed to this window and everything nested in them.
  std::map<uint32_t, std::vector<uint32_t>> tops_by_line_;
  std::string module_;
  // Whether the lines not used could name the module otherwise: a pass named "... (jit_f)"
  // on a line before the one that named it, or a stat where none was found before.
  uint32_t suffix_line_ = kNone;  // L of the pass that named the module
  bool named_ = false;
};

CompileRecord CompileBuilder::build(bool& settled) {
  const std::vector<LineIncs>& lines = plane_.lines;
  rec_.host = p_.hosts[p_.planes[plane_.plane].host].name;
  rec_.thread = std::string(p_.str(p_.lines[lines[w_.line].line].name));
  rec_.start_ps = w_.start;
  rec_.wall_ps = w_.end - w_.start;
  rec_.phases = empty_phases();
  if (w_.anchor != kNone) rec_.function = std::string(function_of(p_.event_name(w_.anchor)));

  for (uint32_t r : w_.roots) tops_by_line_[w_.line].push_back(r);
  for (auto [L, t] : w_.worker_tops) tops_by_line_[L].push_back(t);
  std::vector<LineSegs> segs = walk_members();
  if (!totals_only_) split_wall(segs);
  name_by_entry(settled);
  if (module_.empty()) name_by_stats(settled);
  if (!named_ && plane_.first_unused != kNone) settled = false;
  if (module_.empty() && !rec_.function.empty()) {
    std::string guess = "jit_" + rec_.function;
    if (names_.known(guess)) module_ = guess;
  }
  rec_.module = std::move(module_);
  sort_steps(rec_.steps);
  return std::move(rec_);
}

// Counts the members' events and steps and notes the first pass named after a module ("...
// (jit_f)"); unless totals only, each line's self-time segments and the thread time of phases and
// steps.
std::vector<LineSegs> CompileBuilder::walk_members() {
  std::vector<LineSegs> segs;
  for (auto& [L, tops] : tops_by_line_) {
    const auto& incs = plane_.lines[L].incs;
    // A top's nested events follow it directly in line order.
    std::sort(tops.begin(), tops.end());
    std::vector<uint32_t> members;
    for (uint32_t t : tops)
      for (uint32_t i = t; i < incs.size() && incs[i].top == t; ++i) members.push_back(i);
    for (uint32_t i : members) {
      if (!totals_only_) ++steps_.of(L, i).count;
      ++rec_.events;
      if (module_.empty()) {
        std::string_view suffix = name_suffix(p_.event_name(incs[i].event));
        if (names_.is_module_name(suffix)) {
          module_ = std::string(suffix);
          suffix_line_ = L;
        }
      }
    }
    if (totals_only_) continue;
    LineSegs ls{L, flatten(incs, members, w_.start, w_.end)};
    for (const Seg& s : ls.segs) {
      ls.busy += s.b - s.a;
      steps_.phase_of(L, s.inc).thread_ps += s.b - s.a;
      steps_.of(L, s.inc).thread_ps += s.b - s.a;
    }
    if (L != w_.line) {
      ++rec_.worker_threads;
      rec_.worker_busy_ps += ls.busy;
    }
    segs.push_back(std::move(ls));
  }
  return segs;
}

void CompileBuilder::split_wall(std::vector<LineSegs>& segs) {
  // XLA's NVTX compiles (nsys-jax archives) share each parallel region out among the workers'
  // events by their self time in it, as nsys-jax does, so jaxprof's phases match its tables.
  bool share = p_.event_name(plane_.lines[w_.line].incs[w_.roots.front()].event) == "XlaCompile";
  int64_t between = partition_wall(segs, w_.line, w_.start, w_.end, share, steps_);
  rec_.phases[static_cast<int>(CompilePhase::kBetweenStages)].wall_ps = between;
  if (between > 0) {
    CompileStepTime& s = rec_.steps.emplace_back();
    s.name = "(between stages)";
    s.phase = CompilePhase::kBetweenStages;
    s.wall_ps = between;
  }
}

// Module: the compile entry's own hlo_module / program_id stats (XLA's NVTX XlaCompile range), the
// program id else from the first range on the launching thread that names the same module with one
// (XlaCompileBackend always does; XlaCompile not on every path).
void CompileBuilder::name_by_entry(bool& settled) {
  const auto& incs = plane_.lines[w_.line].incs;
  uint32_t root = w_.roots.front();
  auto module_stats = [&](uint32_t inc, std::string& name, ProgramId& id) {
    bool named = false;
    for (const Stat& st : p_.event_stats(plane_.plane, incs[inc].event)) {
      std::string_view sn = p_.str(st.name);
      if (sn == "hlo_module" && st.value.is_text()) {
        name = std::string(st.value.str);
        named = true;
      }
      if (sn == "program_id" && st.value.kind == StatKind::kInt64 && st.value.i >= 0)
        id = static_cast<ProgramId>(st.value.i);
    }
    return named;
  };
  // Named by its own stats, the compile's module does not depend on the other lines; named
  // by a pass, it does not when no unused line comes before that pass's line.
  bool root_named = module_stats(root, module_, rec_.program_id);
  if (root_named)
    suffix_line_ = kNone;
  else if (suffix_line_ != kNone && plane_.line_pos[suffix_line_] > plane_.first_unused_suffix)
    settled = false;
  named_ = root_named || suffix_line_ != kNone;
  for (uint32_t i = root + 1, budget = 64; !module_.empty() && rec_.program_id == kNoProgram &&
                                           budget > 0 && i < incs.size() && incs[i].top == root;
       ++i, --budget) {
    std::string name;
    ProgramId id = kNoProgram;
    module_stats(i, name, id);
    if (name == module_) rec_.program_id = id;
  }
}

// Else (neither the entry nor a pass named it) a module/name stat on the compiler's own events
// (not on codegen: FusionCompiler names its kernel module); build() else guesses jit_<function>.
void CompileBuilder::name_by_stats(bool& settled) {
  if (plane_.first_unused_suffix != kNone) settled = false;
  int budget = 256;
  for (auto& [L, tops] : tops_by_line_) {
    const auto& incs = plane_.lines[L].incs;
    for (uint32_t t : tops) {
      for (uint32_t i = t; i < incs.size() && incs[i].top == t && module_.empty() && budget > 0;
           ++i) {
        if (incs[i].phase == CompilePhase::kCodegen) continue;
        --budget;
        for (const Stat& st : p_.event_stats(plane_.plane, incs[i].event)) {
          std::string_view sn = p_.str(st.name);
          if ((sn == "hlo_module" || sn == "module" || sn == "name") && st.value.is_text() &&
              names_.is_module_name(st.value.str)) {
            module_ = std::string(st.value.str);
            break;
          }
        }
      }
    }
    if (!module_.empty()) {
      named_ = true;
      if (plane_.line_pos[L] > plane_.first_unused) settled = false;
      break;
    }
  }
}

// Each host's compiles (every step, sorted), from the lines marked in `line_used` (decoded). With
// `totals_only` phases and steps are left empty; `settled` is cleared when a compile's module
// might be named differently had the needed lines that are not used been read too.
std::vector<PartialCompile> compile_records(const Profile& p, const CompileClasses& c,
                                            const std::vector<uint8_t>& line_used, bool totals_only,
                                            bool& settled) {
  std::vector<PartialCompile> out(p.hosts.size());
  for (PartialCompile& h : out) h.totals_only = totals_only;
  settled = true;
  const ModuleNames names(p);
  const LineFilter module_suffixes = module_suffix_lines(p, c, names);
  for (uint32_t pi = 0; pi < p.planes.size(); ++pi) {
    if (!c.plane_has_compile[pi]) continue;
    PartialCompile& host = out[p.planes[pi].host];
    const PlaneIncs plane = collect_plane(p, c, pi, line_used, module_suffixes);
    std::vector<Window> windows = find_windows(plane, host);
    attribute_tops(plane, windows, host);
    for (const Window& w : windows)
      host.records.push_back(CompileBuilder(p, plane, names, w, totals_only).build(settled));
  }
  for (PartialCompile& h : out)
    std::stable_sort(
        h.records.begin(), h.records.end(),
        [](const CompileRecord& a, const CompileRecord& b) { return a.start_ps < b.start_ps; });
  return out;
}

// The launching threads alone give every compile and its wall time; the module too, unless a
// worker thread could name it first.
std::optional<std::vector<PartialCompile>> totals_from_roots(const Profile& p,
                                                             const CompileClasses& c) {
  for (uint32_t li = 0; li < p.lines.size(); ++li)
    if (c.line_roots[li] && !p.lines[li].decoded) return std::nullopt;
  bool settled = true;
  std::vector<PartialCompile> r = compile_records(p, c, c.line_roots, true, settled);
  if (!settled) return std::nullopt;
  return r;
}

std::vector<PartialCompile> records_of(const Profile& p, bool totals_only) {
  CompileClasses c = classify_lines(p);
  if (totals_only) {
    p.require_lines(root_lines(p, c));
    if (std::optional<std::vector<PartialCompile>> r = totals_from_roots(p, c)) return *r;
  }
  std::vector<uint32_t> needed;
  for (uint32_t li = 0; li < p.lines.size(); ++li)
    if (c.line_needed[li]) needed.push_back(li);
  p.require_lines(needed);
  bool settled = true;
  return compile_records(p, c, c.line_needed, totals_only, settled);
}

}  // namespace
}  // namespace compile_detail

const std::vector<PartialCompile>& compile_totals_by_host(const Profile& p) {
  return p.memo<std::vector<PartialCompile>>("compile_totals_by_host",
                                             [&] { return compile_detail::records_of(p, true); });
}

void extract_compile(PartialBuild& b, bool totals_only) {
  std::vector<PartialCompile> hosts =
      totals_only ? compile_totals_by_host(b.p) : compile_detail::records_of(b.p, false);
  for (size_t h = 0; h < hosts.size(); ++h) {
    const int64_t shift = b.shift_ps(static_cast<uint32_t>(h));
    for (CompileRecord& r : hosts[h].records) r.start_ps -= shift;
    b.hosts[h].compile = std::move(hosts[h]);
  }
}

std::vector<uint32_t> compile_totals_lines(const Profile& p) {
  return compile_detail::root_lines(p, compile_detail::classify_lines(p));
}

}  // namespace jaxprof
