// The compile events of host lines, the parts of compile.cc that find them (not for other
// callers): which event metadata are compile events, which lines may hold them, and each line's
// compile events with how they nest.
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

#include "jaxprof/analysis/compile/compile.h"
#include "jaxprof/model/profile.h"

namespace jaxprof::compile_detail {

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

// Which metadata are compile events, and the host planes that hold a compile's start.
struct CompileClasses {
  std::vector<CompileEventClass> cls;
  std::vector<uint8_t> traits;  // NameTrait bits, of host metadata entries
  std::vector<uint8_t> plane_has_compile;
  std::vector<uint8_t> line_needed;  // lines that may give compile events
  std::vector<uint8_t> line_roots;   // of those, lines that may hold a stage or compile entry
};

CompileClasses classify_lines(const Profile& p);

// The lines marked in `line_roots`, ascending.
std::vector<uint32_t> root_lines(const Profile& p, const CompileClasses& c);

// The compile events of line `li` (decoded). Inside a JAX stage only recognised events count
// (everything else there is Python or nested dispatch, folded into the stage); inside XLA's
// compiler every event counts, unknown names taking their parent's phase (direct children of the
// compile entry are HLO passes). On threads that only compile, every event counts.
LineIncs collect_line(const Profile& p, uint32_t li, const std::vector<CompileEventClass>& cls,
                      const std::vector<uint8_t>& traits);

}  // namespace jaxprof::compile_detail
