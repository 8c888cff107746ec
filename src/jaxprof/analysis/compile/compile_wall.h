// Where a compile's time goes (part of compile.cc, not for other callers): each thread's self
// time in the compile's window, the steps and phases it is charged to, and the partition of the
// window's wall time among the threads' events, so that phases add up to the wall time exactly.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "jaxprof/analysis/compile/compile_lines.h"
#include "jaxprof/model/compile_record.h"
#include "jaxprof/model/profile.h"

namespace jaxprof::compile_detail {

// Self-time segments of a set of nested events on one line: [a, b) belongs to `inc`, the
// innermost event open there. Children are clipped to their parent and to the window.
struct Seg {
  int64_t a, b;
  uint32_t inc;
};

std::vector<Seg> flatten(const std::vector<Inc>& incs, const std::vector<uint32_t>& members,
                         int64_t lo, int64_t hi);

// One line's self-time segments in a compile's window, and their total.
struct LineSegs {
  uint32_t L;  // index into the plane's LineIncs
  std::vector<Seg> segs;
  int64_t busy = 0;
};

// A compile's steps (CompileRecord::steps), one per event name in the order first met, and its
// phases: what the time of each of its events is added to.
class CompileSteps {
 public:
  CompileSteps(const Profile& p, const std::vector<LineIncs>& lines, CompileRecord& rec)
      : p_(p), lines_(lines), rec_(rec) {}

  CompileStepTime& of(uint32_t L, uint32_t inc) {
    const Inc& x = lines_[L].incs[inc];
    std::string_view name = p_.event_name(x.event);
    auto [it, added] = index_.try_emplace(name, rec_.steps.size());
    if (added) {
      CompileStepTime& s = rec_.steps.emplace_back();
      s.name = std::string(name);
      s.phase = x.phase;
    }
    return rec_.steps[it->second];
  }
  CompilePhaseTime& phase_of(uint32_t L, uint32_t inc) {
    return rec_.phases[static_cast<int>(lines_[L].incs[inc].phase)];
  }
  void add_wall(uint32_t L, uint32_t inc, int64_t ps) {
    phase_of(L, inc).wall_ps += ps;
    of(L, inc).wall_ps += ps;
  }

 private:
  const Profile& p_;
  const std::vector<LineIncs>& lines_;
  CompileRecord& rec_;
  std::unordered_map<std::string_view, size_t> index_;
};

// Partitions the window [start, end) of a compile launched on line `launching`: each stretch goes
// to a worker thread's innermost event where one runs (the launching thread waits for it; the
// busiest worker first), else the launching thread's, else it lies between stages (the returned
// total). With `share` (XLA's NVTX compiles) a parallel region is shared out among the workers'
// events by their self time in it instead. Sorts `segs`.
int64_t partition_wall(std::vector<LineSegs>& segs, uint32_t launching, int64_t start, int64_t end,
                       bool share, CompileSteps& steps);

}  // namespace jaxprof::compile_detail
