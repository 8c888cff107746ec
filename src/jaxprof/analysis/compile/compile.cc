#include "jaxprof/analysis/compile/compile.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <limits>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "jaxprof/analysis/ops/line_filter.h"
#include "jaxprof/analysis/partial/extract_partials.h"
#include "jaxprof/analysis/partial/partial_build.h"

namespace jaxprof {

namespace {

bool contains(std::string_view s, std::string_view part) {
  return s.find(part) != std::string_view::npos;
}

CompileEventClass stage(CompilePhase p) { return {CompileEventKind::kJaxStage, p}; }
CompileEventClass phase(CompilePhase p) { return {CompileEventKind::kPhase, p}; }

}  // namespace

namespace {

// XLA's NVTX ranges from nsys-jax archives, which the importer names "Kind" or "Kind:pass".
bool classify_nvtx(std::string_view name, CompileEventClass& out) {
  using P = CompilePhase;
  std::string_view kind = name.substr(0, name.find(':'));
  if (!kind.starts_with("Xla")) return false;
  if (kind == "XlaCompile") {
    out = {CompileEventKind::kXlaRoot, P::kCompileOther};
  } else if (kind == "XlaDumpHloModule") {
    out = {CompileEventKind::kPhase, P::kCompileOther};
  } else if (kind == "XlaPass" || kind == "XlaPassPipeline" || kind == "XlaMemoryScheduler" ||
             kind == "XlaBufferAssignment") {
    // Scheduling and buffer assignment rewrite and place HLO; they make no code.
    out = phase(P::kHloPasses);
  } else if (kind == "XlaCompileBackend" || kind.starts_with("XlaEmit") ||
             kind == "XlaOptimizeLlvmIr" || kind == "XlaDumpLlvmIr" || kind == "XlaCompileGpuAsm" ||
             kind == "XlaCreateGpuExecutable" || kind == "XlaCompileCudnnFusion" ||
             kind.starts_with("XlaAutotuner")) {
    // Autotuning compiles and times candidate kernels: backend work, so codegen.
    out = phase(P::kCodegen);
  } else {
    return false;
  }
  return true;
}

}  // namespace

bool is_folded_compile_event(std::string_view name) { return name == "XlaAutotunerMeasurement"; }

CompileEventClass classify_compile_event(std::string_view name) {
  using P = CompilePhase;
  if (CompileEventClass c; classify_nvtx(name, c)) return c;
  if (name.starts_with('$')) {
    // Python tracer frames ("$partial_eval.py:2268 trace_to_jaxpr"): only tracing is useful,
    // because JAX versions that annotate lowering do not annotate tracing before it.
    std::string_view fn = name.substr(name.rfind(' ') + 1);
    if (fn == "trace_to_jaxpr" || fn == "trace_to_jaxpr_dynamic") return stage(P::kTrace);
    return {};
  }
  // JAX's profiler annotations on its compile stages.
  if (name == "trace_to_jaxpr_dynamic" || name == "trace_to_jaxpr") return stage(P::kTrace);
  if (name == "lower_sharding_computation" || name == "lower_mesh_computation" ||
      name == "lower_jaxpr_to_module")
    return stage(P::kLower);
  if (name == "backend_compile" || name == "backend_compile_and_load")
    return stage(P::kCompileOther);
  // XLA: per-kernel compilers are code generation; client and backend compilers are the entry.
  if (name.starts_with("FusionCompiler::") || name.starts_with("JitCompiler::") ||
      name.starts_with("KernelCompiler"))
    return phase(P::kCodegen);
  if (name.ends_with("Client::Compile") || name.ends_with("Compiler::Compile") ||
      name.ends_with("Client::CompileAndLoad"))
    return {CompileEventKind::kXlaRoot, P::kCompileOther};
  if (name.starts_with("XLA::TPU ")) {
    bool hlo = contains(name, "HLO") || contains(name, "hlo") || contains(name, "PreLayout") ||
               contains(name, "X64 elimination");
    return phase(hlo ? P::kHloPasses : P::kCodegen);
  }
  if (contains(name, "RunBackend") || contains(name, "CompileCpuExecutable") ||
      name.starts_with("ThunkEmitter::") || name == "SplitModule" || name == "Codegen" ||
      name.starts_with("mlir::") || name.starts_with("TaskDispatcher::") ||
      contains(name, "LLVM") || contains(name, "llvm") || name.starts_with("LSRAv2") ||
      (name.ends_with("Pass") && name.find(' ') == std::string_view::npos))
    return phase(P::kCodegen);
  if (contains(name, "RunHloPasses") || contains(name, "passes") || contains(name, "Passes") ||
      name == "RunInvariantCheckers")
    return phase(P::kHloPasses);
  return {};
}

namespace {

constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();

// A compile event on one line, in line order (start ascending, longest first).
struct Inc {
  uint32_t event = 0;
  int64_t start = 0, end = 0;
  CompilePhase phase = CompilePhase::kCompileOther;
  CompileEventKind kind = CompileEventKind::kNone;
  uint32_t parent = kNone;  // nearest enclosing compile event (index into the line's list)
  uint32_t top = 0;         // outermost enclosing compile event (itself when top-level)
  uint32_t anchor = kNone;  // nearest enclosing non-compile, non-Python-frame event (global)
};

struct LineIncs {
  uint32_t line = 0;
  std::vector<Inc> incs;
};

// The compile events of one line. Inside a JAX stage only recognised events count (everything
// else there is Python or nested dispatch, folded into the stage); inside XLA's compiler every
// event counts, unknown names taking their parent's phase (direct children of the compile entry
// are HLO passes). On threads that only compile, every event counts.
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
    if (d > 0)
      stack.push_back({s + d, inc != kNone ? inc : parent, child_anchor,
                       folded || (inc != kNone && (trait & kFolded))});
  }
  return out;
}

// Self-time segments of a set of nested events on one line: [a, b) belongs to `inc`, the
// innermost event open there. Children are clipped to their parent and to the window.
struct Seg {
  int64_t a, b;
  uint32_t inc;
};

std::vector<Seg> flatten(const std::vector<Inc>& incs, const std::vector<uint32_t>& members,
                         int64_t lo, int64_t hi) {
  std::vector<Seg> out;
  struct Open {
    int64_t end;
    uint32_t inc;
  };
  std::vector<Open> stack;
  int64_t cur = lo;
  auto emit = [&](int64_t a, int64_t b, uint32_t inc) {
    a = std::max(a, lo);
    b = std::min(b, hi);
    if (b > a) out.push_back({a, b, inc});
  };
  auto pop_until = [&](int64_t t) {
    while (!stack.empty() && stack.back().end <= t) {
      emit(cur, stack.back().end, stack.back().inc);
      cur = std::max(cur, stack.back().end);
      stack.pop_back();
    }
  };
  for (uint32_t i : members) {
    const Inc& x = incs[i];
    pop_until(x.start);
    if (!stack.empty()) emit(cur, x.start, stack.back().inc);
    cur = std::max(cur, x.start);
    int64_t end = stack.empty() ? x.end : std::min(x.end, stack.back().end);
    if (end > x.start) stack.push_back({end, i});
  }
  pop_until(std::numeric_limits<int64_t>::max());
  return out;
}

// Parallel regions of one compile, by the launching thread's event that was open while the
// workers ran: the region's wall time and each worker event's self time in it.
class ParallelPools {
 public:
  void add(uint32_t launcher, const std::vector<std::pair<size_t, uint32_t>>& active, int64_t ps) {
    Pool& pool = pools_[launcher];
    pool.wall += ps;
    for (const auto& a : active) pool.self[a] += ps;
  }
  // Each region's wall time in proportion to the self times, in integer picoseconds that add up
  // exactly (the rounding remainder goes to the largest share).
  template <typename Give>
  void share_out(Give&& give) const {
    for (const auto& [launcher, pool] : pools_) {
      __int128 total = 0;
      for (const auto& [key, self] : pool.self) total += self;
      if (total == 0) continue;
      int64_t given = 0, largest = -1;
      std::pair<size_t, uint32_t> largest_key{};
      for (const auto& [key, self] : pool.self) {
        int64_t part = static_cast<int64_t>(static_cast<__int128>(pool.wall) * self / total);
        give(key.first, key.second, part);
        given += part;
        if (self > largest) {
          largest = self;
          largest_key = key;
        }
      }
      if (pool.wall > given) give(largest_key.first, largest_key.second, pool.wall - given);
    }
  }

 private:
  struct Pool {
    int64_t wall = 0;
    std::map<std::pair<size_t, uint32_t>, int64_t> self;
  };
  std::map<uint32_t, Pool> pools_;
};

// The passes alone: XLA's NVTX "XlaPass:NAME" ranges as NAME (their pipelines, scheduling and
// buffer assignment left out), else the steps of the HLO-passes phase.
void keep_passes(std::vector<CompileStepTime>& steps) {
  constexpr std::string_view kPass = "XlaPass:";
  std::vector<CompileStepTime> kept;
  for (CompileStepTime& s : steps) {
    if (s.name.starts_with(kPass)) {
      s.name.erase(0, kPass.size());
      kept.push_back(std::move(s));
    } else if (!s.name.starts_with("Xla") && s.phase == CompilePhase::kHloPasses) {
      kept.push_back(std::move(s));
    }
  }
  steps = std::move(kept);
}

struct Window {
  uint32_t plane = 0;
  uint32_t line = 0;  // index into the plane's LineIncs
  int64_t start = 0, end = 0;
  std::vector<uint32_t> roots;  // tops on the launching line
  uint32_t anchor = kNone;
  // (line index, top index) of worker events attributed to it
  std::vector<std::pair<uint32_t, uint32_t>> worker_tops;
};

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

}  // namespace

namespace {

// Which metadata are compile events, and the host planes that hold a compile's start.
struct CompileClasses {
  std::vector<CompileEventClass> cls;
  std::vector<uint8_t> traits;  // NameTrait bits, of host metadata entries
  std::vector<uint8_t> plane_has_compile;
  std::vector<uint8_t> line_needed;  // lines that may give compile events
  std::vector<uint8_t> line_roots;   // of those, lines that may hold a stage or compile entry
};

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

// The compiles found on the lines marked in `line_used` (decoded). With `totals_only` phases
// and steps are left empty; `settled` is cleared when a compile's module might be named
// differently had the needed lines that are not used been read too.
// Each host's compiles (every step, sorted), from the lines marked in `line_used`.
std::vector<PartialCompile> compile_records(const Profile& p, const CompileClasses& c,
                                            const std::vector<uint8_t>& line_used, bool totals_only,
                                            bool& settled) {
  std::vector<PartialCompile> out(p.hosts.size());
  for (PartialCompile& h : out) h.totals_only = totals_only;
  const std::vector<CompileEventClass>& cls = c.cls;
  const std::vector<uint8_t>& plane_has_compile = c.plane_has_compile;
  const std::vector<uint8_t>& line_needed = line_used;
  settled = true;

  std::unordered_set<std::string_view> known_modules;
  for (const ModuleKey& m : p.modules)
    if (m.name != 0) known_modules.insert(p.str(m.name));
  for (const auto& m : p.hlo.modules()) known_modules.insert(m->name);
  auto is_module_name = [&](std::string_view s) {
    if (s.empty()) return false;
    return known_modules.count(s) > 0 || s.starts_with("jit_") || s.starts_with("pmap_");
  };

  LineFilter module_suffixes(p);
  for (uint32_t mi = 0; mi < p.event_metadata.size(); ++mi)
    if (cls[mi].kind != CompileEventKind::kNone ||
        !p.str(p.event_metadata[mi].name).starts_with('$'))
      if (is_module_name(name_suffix(p.str(p.event_metadata[mi].name)))) module_suffixes.want(mi);

  for (uint32_t pi = 0; pi < p.planes.size(); ++pi) {
    if (!plane_has_compile[pi]) continue;
    const Plane& plane = p.planes[pi];
    PartialCompile& host = out[plane.host];
    std::vector<LineIncs> lines;
    std::vector<uint32_t> line_pos;  // of lines[L] in the plane
    // Plane positions of the first needed line not used whose events may name a module by a
    // stat (none when the plane declares no such stat), and of the first such line that may
    // hold a pass named after a module.
    bool stats_may_name = false;
    for (std::string_view sn : {"hlo_module", "module", "name"})
      stats_may_name |= p.plane_may_have_stat(pi, sn);
    uint32_t first_unused = kNone, first_unused_suffix = kNone;
    for (uint32_t k = 0; k < plane.lines.size(); ++k) {
      uint32_t li = plane.lines[k];
      if (!line_needed[li]) {
        if (c.line_needed[li]) {
          if (stats_may_name) first_unused = std::min(first_unused, k);
          if (module_suffixes.may_hold(li)) first_unused_suffix = std::min(first_unused_suffix, k);
        }
        continue;
      }
      LineIncs l = collect_line(p, li, cls, c.traits);
      if (!l.incs.empty()) {
        lines.push_back(std::move(l));
        line_pos.push_back(k);
      }
    }
    // Windows: outermost JAX stages, merged when they share the enclosing call (one cache miss
    // runs trace, lower and backend_compile inside one PjitFunction(f)).
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
        w.plane = pi;
        w.line = L;
        w.start = x.start;
        w.end = x.end;
        w.roots = {i};
        w.anchor = x.anchor;
      }
    }
    auto by_start = [](const Window& a, const Window& b) { return a.start < b.start; };
    std::sort(windows.begin(), windows.end(), by_start);
    // The window a time falls in: the latest-starting one that contains it.
    auto window_at = [&](int64_t t) -> Window* {
      Window* found = nullptr;
      for (Window& w : windows) {
        if (w.start > t) break;
        if (t < w.end) found = &w;
      }
      return found;
    };
    // XLA compiles outside any JAX stage (no annotations, or a C++ caller) are compiles too.
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
        w.plane = pi;
        w.line = L;
        w.start = x.start;
        w.end = x.end;
        w.roots = {i};
      }
    }
    std::sort(windows.begin(), windows.end(), by_start);
    std::vector<std::unordered_set<uint32_t>> root_sets(windows.size());
    for (size_t w = 0; w < windows.size(); ++w)
      root_sets[w].insert(windows[w].roots.begin(), windows[w].roots.end());
    // Attribute every other top-level compile event by time containment.
    for (uint32_t L = 0; L < lines.size(); ++L) {
      const auto& incs = lines[L].incs;
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

    for (Window& w : windows) {
      CompileRecord rec;
      rec.host = p.hosts[plane.host].name;
      rec.thread = std::string(p.str(p.lines[lines[w.line].line].name));
      rec.start_ps = w.start;
      rec.wall_ps = w.end - w.start;
      rec.phases = empty_phases();
      if (w.anchor != kNone) rec.function = std::string(function_of(p.event_name(w.anchor)));

      // Members per line: the tops attributed to this window and everything nested in them.
      std::map<uint32_t, std::vector<uint32_t>> tops_by_line;
      for (uint32_t r : w.roots) tops_by_line[w.line].push_back(r);
      for (auto [L, t] : w.worker_tops) tops_by_line[L].push_back(t);
      struct LineSegs {
        uint32_t L;
        std::vector<Seg> segs;
        int64_t busy = 0;
      };
      std::vector<LineSegs> segs;
      std::unordered_map<std::string_view, size_t> step_index;
      auto step_of = [&](uint32_t L, uint32_t inc) -> CompileStepTime& {
        const Inc& x = lines[L].incs[inc];
        std::string_view name = p.event_name(x.event);
        auto [it, added] = step_index.try_emplace(name, rec.steps.size());
        if (added) {
          CompileStepTime& s = rec.steps.emplace_back();
          s.name = std::string(name);
          s.phase = x.phase;
        }
        return rec.steps[it->second];
      };
      std::string module;
      // Whether the lines not used could name the module otherwise: a pass named "... (jit_f)"
      // on a line before the one that named it, or a stat where none was found before.
      uint32_t suffix_line = kNone;  // L of the pass that named the module
      bool named = false;
      for (auto& [L, tops] : tops_by_line) {
        const auto& incs = lines[L].incs;
        // A top's nested events follow it directly in line order.
        std::sort(tops.begin(), tops.end());
        std::vector<uint32_t> members;
        for (uint32_t t : tops)
          for (uint32_t i = t; i < incs.size() && incs[i].top == t; ++i) members.push_back(i);
        for (uint32_t i : members) {
          if (!totals_only) ++step_of(L, i).count;
          ++rec.events;
          if (module.empty()) {
            std::string_view suffix = name_suffix(p.event_name(incs[i].event));
            if (is_module_name(suffix)) {
              module = std::string(suffix);
              suffix_line = L;
            }
          }
        }
        if (totals_only) continue;
        LineSegs ls{L, flatten(incs, members, w.start, w.end)};
        for (const Seg& s : ls.segs) {
          ls.busy += s.b - s.a;
          const Inc& x = incs[s.inc];
          rec.phases[static_cast<int>(x.phase)].thread_ps += s.b - s.a;
          step_of(L, s.inc).thread_ps += s.b - s.a;
        }
        if (L != w.line) {
          ++rec.worker_threads;
          rec.worker_busy_ps += ls.busy;
        }
        segs.push_back(std::move(ls));
      }
      if (!totals_only) {
        // Wall partition: a worker thread's innermost event where one runs (the launching thread
        // waits for it; the busiest worker first), else the launching thread's, else between
        // stages.
        std::sort(segs.begin(), segs.end(), [&](const LineSegs& a, const LineSegs& b) {
          bool am = a.L == w.line, bm = b.L == w.line;
          if (am != bm) return bm;
          if (a.busy != b.busy) return a.busy > b.busy;
          return a.L < b.L;
        });
        std::vector<int64_t> cuts = {w.start, w.end};
        for (const LineSegs& ls : segs)
          for (const Seg& s : ls.segs) {
            cuts.push_back(s.a);
            cuts.push_back(s.b);
          }
        std::sort(cuts.begin(), cuts.end());
        cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
        std::vector<size_t> pos(segs.size(), 0);
        int64_t between = 0;
        auto give = [&](size_t k, uint32_t inc, int64_t ps) {
          const Inc& x = lines[segs[k].L].incs[inc];
          rec.phases[static_cast<int>(x.phase)].wall_ps += ps;
          step_of(segs[k].L, inc).wall_ps += ps;
        };
        // XLA's NVTX compiles (nsys-jax archives) share each parallel region out among the workers'
        // events by their self time in it, as nsys-jax does, so jaxprof's phases match its tables.
        bool share = p.event_name(lines[w.line].incs[w.roots.front()].event) == "XlaCompile";
        ParallelPools pools;
        std::vector<std::pair<size_t, uint32_t>> active;
        for (size_t c = 0; c + 1 < cuts.size(); ++c) {
          int64_t a = cuts[c], b = cuts[c + 1];
          size_t main_k = kNone;
          uint32_t main_inc = kNone;
          active.clear();
          for (size_t k = 0; k < segs.size(); ++k) {
            const auto& v = segs[k].segs;
            while (pos[k] < v.size() && v[pos[k]].b <= a) ++pos[k];
            if (pos[k] >= v.size() || v[pos[k]].a > a) continue;
            if (segs[k].L == w.line) {
              main_k = k;
              main_inc = v[pos[k]].inc;
            } else {
              active.push_back({k, v[pos[k]].inc});  // busiest worker first
            }
          }
          if (!active.empty() && share) {
            // The launching thread's event open now is the one that launched the workers.
            pools.add(main_inc, active, b - a);
          } else if (!active.empty()) {
            give(active.front().first, active.front().second, b - a);
          } else if (main_k != kNone) {
            give(main_k, main_inc, b - a);
          } else {
            between += b - a;
          }
        }
        pools.share_out(give);
        rec.phases[static_cast<int>(CompilePhase::kBetweenStages)].wall_ps = between;
        if (between > 0) {
          CompileStepTime& s = rec.steps.emplace_back();
          s.name = "(between stages)";
          s.phase = CompilePhase::kBetweenStages;
          s.wall_ps = between;
        }
      }
      // Module: the compile entry's own hlo_module / program_id stats (XLA's NVTX XlaCompile
      // range), the program id else from the first range on the launching thread that names the
      // same module with one (XlaCompileBackend always does; XlaCompile not on every path).
      {
        const auto& incs = lines[w.line].incs;
        uint32_t root = w.roots.front();
        auto module_stats = [&](uint32_t inc, std::string& name, ProgramId& id) {
          bool named = false;
          for (const Stat& st : p.event_stats(pi, incs[inc].event)) {
            std::string_view sn = p.str(st.name);
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
        bool root_named = module_stats(root, module, rec.program_id);
        if (root_named)
          suffix_line = kNone;
        else if (suffix_line != kNone && line_pos[suffix_line] > first_unused_suffix)
          settled = false;
        named = root_named || suffix_line != kNone;
        for (uint32_t i = root + 1, budget = 64;
             !module.empty() && rec.program_id == kNoProgram && budget > 0 && i < incs.size() &&
             incs[i].top == root;
             ++i, --budget) {
          std::string name;
          ProgramId id = kNoProgram;
          module_stats(i, name, id);
          if (name == module) rec.program_id = id;
        }
      }
      // Else a pass named "... (jit_f)", else a module/name stat on the compiler's own events
      // (not on codegen: FusionCompiler names its kernel module), else jit_<function>.
      if (module.empty()) {
        if (first_unused_suffix != kNone) settled = false;
        int budget = 256;
        for (auto& [L, tops] : tops_by_line) {
          const auto& incs = lines[L].incs;
          for (uint32_t t : tops) {
            for (uint32_t i = t;
                 i < incs.size() && incs[i].top == t && module.empty() && budget > 0; ++i) {
              if (incs[i].phase == CompilePhase::kCodegen) continue;
              --budget;
              for (const Stat& st : p.event_stats(pi, incs[i].event)) {
                std::string_view sn = p.str(st.name);
                if ((sn == "hlo_module" || sn == "module" || sn == "name") && st.value.is_text() &&
                    is_module_name(st.value.str)) {
                  module = std::string(st.value.str);
                  break;
                }
              }
            }
          }
          if (!module.empty()) {
            named = true;
            if (line_pos[L] > first_unused) settled = false;
            break;
          }
        }
      }
      if (!named && first_unused != kNone) settled = false;
      if (module.empty() && !rec.function.empty()) {
        std::string guess = "jit_" + rec.function;
        if (known_modules.count(guess)) module = guess;
      }
      rec.module = std::move(module);
      sort_steps(rec.steps);
      host.records.push_back(std::move(rec));
    }
  }
  for (PartialCompile& h : out)
    std::stable_sort(
        h.records.begin(), h.records.end(),
        [](const CompileRecord& a, const CompileRecord& b) { return a.start_ps < b.start_ps; });
  return out;
}

std::vector<uint32_t> root_lines(const Profile& p, const CompileClasses& c) {
  std::vector<uint32_t> roots;
  for (uint32_t li = 0; li < p.lines.size(); ++li)
    if (c.line_roots[li]) roots.push_back(li);
  return roots;
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

const std::vector<PartialCompile>& compile_totals_by_host(const Profile& p) {
  return p.memo<std::vector<PartialCompile>>("compile_totals_by_host",
                                             [&] { return records_of(p, true); });
}

void extract_compile(PartialBuild& b, bool totals_only) {
  std::vector<PartialCompile> hosts =
      totals_only ? compile_totals_by_host(b.p) : records_of(b.p, false);
  for (size_t h = 0; h < hosts.size(); ++h) {
    const int64_t shift = b.shift_ps(static_cast<uint32_t>(h));
    for (CompileRecord& r : hosts[h].records) r.start_ps -= shift;
    b.hosts[h].compile = std::move(hosts[h]);
  }
}

std::vector<uint32_t> compile_totals_lines(const Profile& p) {
  return root_lines(p, classify_lines(p));
}

CompileResult compile_from_partials(const PartialSet& set, const CompileOptions& options) {
  if (options.totals_only)
    set.require_any(kPartCompileTotals | kPartCompile, "compile");
  else
    set.require(kPartCompile, "compile");
  CompileResult result;
  result.phases = empty_phases();
  result.passes_only = options.passes_only;
  bool saw_stage = false, totals_only = false;
  uint64_t unattributed = 0;
  set.for_each_host([&](uint32_t hi, const HostPartial& h) {
    const PartialCompile& c = h.compile;
    saw_stage |= c.saw_stage;
    totals_only |= c.totals_only || options.totals_only;
    unattributed += c.unattributed;
    for (CompileRecord rec : c.records) {
      rec.start_ps += set.shift_ps(hi);
      if (options.totals_only) {
        rec.phases = empty_phases();
        rec.steps.clear();
        rec.events = 0;
        rec.worker_threads = 0;
        rec.worker_busy_ps = 0;
      }
      if (options.passes_only) {
        keep_passes(rec.steps);
        sort_steps(rec.steps);
      }
      if (options.top_steps > 0 && rec.steps.size() > options.top_steps)
        rec.steps.resize(options.top_steps);
      result.compiles.push_back(std::move(rec));
    }
  });
  std::stable_sort(
      result.compiles.begin(), result.compiles.end(),
      [](const CompileRecord& a, const CompileRecord& b) { return a.start_ps < b.start_ps; });

  std::map<std::pair<std::string, ProgramId>, size_t> module_index;
  for (const CompileRecord& c : result.compiles) {
    result.wall_ps += c.wall_ps;
    result.worker_busy_ps += c.worker_busy_ps;
    auto [it, added] = module_index.try_emplace({c.module, c.program_id}, result.modules.size());
    if (added) {
      ModuleCompile& m = result.modules.emplace_back();
      m.module = c.module;
      m.program_id = c.program_id;
      m.phases = empty_phases();
    }
    ModuleCompile& m = result.modules[it->second];
    ++m.compiles;
    m.wall_ps += c.wall_ps;
    m.worker_busy_ps += c.worker_busy_ps;
    for (int i = 0; i < kCompilePhaseCount; ++i) {
      m.phases[i].wall_ps += c.phases[i].wall_ps;
      m.phases[i].thread_ps += c.phases[i].thread_ps;
      result.phases[i].wall_ps += c.phases[i].wall_ps;
      result.phases[i].thread_ps += c.phases[i].thread_ps;
    }
  }
  if (options.passes_only) {
    std::unordered_map<std::string, size_t> pass_index;
    for (const CompileRecord& c : result.compiles)
      for (const CompileStepTime& st : c.steps) {
        auto [it, added] = pass_index.try_emplace(st.name, result.passes.size());
        if (added) {
          result.passes.push_back(st);
          continue;
        }
        CompileStepTime& agg = result.passes[it->second];
        agg.count += st.count;
        agg.wall_ps += st.wall_ps;
        agg.thread_ps += st.thread_ps;
      }
    std::sort(result.passes.begin(), result.passes.end(),
              [](const CompileStepTime& a, const CompileStepTime& b) {
                if (a.wall_ps != b.wall_ps) return a.wall_ps > b.wall_ps;
                return a.name < b.name;
              });
  }
  std::stable_sort(result.modules.begin(), result.modules.end(),
                   [](const ModuleCompile& a, const ModuleCompile& b) {
                     if (a.wall_ps != b.wall_ps) return a.wall_ps > b.wall_ps;
                     return a.module < b.module;
                   });

  if (result.compiles.empty()) {
    result.notes.push_back(
        "no compile events: programs were compiled before the capture began, loaded from the "
        "compilation cache, or this backend records none on host threads");
  } else if (!saw_stage) {
    result.notes.push_back(
        "no JAX stage events (trace_to_jaxpr_dynamic, lower_sharding_computation, "
        "backend_compile): compiles are XLA's compile entry points alone; tracing and lowering "
        "are not visible");
  }
  if (unattributed > 0 && !totals_only)
    result.notes.push_back(fmt::format(
        "{} compile events lie outside every compile window (a compile cut by the capture's "
        "start, or one with no launching event) and are not counted",
        unattributed));
  return result;
}

CompileResult compute_compile(const Profile& p, const CompileOptions& options) {
  PartialExtractOptions extract;
  extract.parts = options.totals_only ? kPartCompileTotals : kPartCompile;
  return compile_from_partials(PartialSet(extract_partials(p, extract)), options);
}

}  // namespace jaxprof
