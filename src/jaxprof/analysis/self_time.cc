#include "jaxprof/analysis/self_time.h"

#include <algorithm>

namespace jaxprof {

namespace {

// An event that may still contain later ones, with the running union of what it contains.
struct Open {
  uint32_t index;
  int64_t begin, end;
  int64_t covered = 0;  // union length of nested intervals seen so far
  int64_t cover_end;    // end of that union (children arrive in start order)
};

}  // namespace

void compute_self_times(const Events& events, uint32_t first, uint32_t count,
                        std::vector<int64_t>& self, const std::vector<uint8_t>* participates,
                        int64_t tol) {
  self.assign(count, 0);
  std::vector<Open> open;
  for (uint32_t k = 0; k < count; ++k) {
    if (participates && !(*participates)[k]) continue;
    uint32_t e = first + k;
    int64_t b = events.start_ps[e], d = events.duration_ps[e], en = b + d;
    // Every open event that contains this one gets its clipped interval; expired ones leave.
    size_t keep = 0;
    for (size_t j = 0; j < open.size(); ++j) {
      Open& o = open[j];
      if (o.end + tol < b) continue;  // no later event can nest in it
      if (b >= o.begin - tol && en <= o.end + tol) {
        int64_t lo = std::max({b, o.begin, o.cover_end});
        int64_t hi = std::min(en, o.end);
        if (hi > lo) {
          o.covered += hi - lo;
          self[o.index] = (o.end - o.begin) - o.covered;
        }
        o.cover_end = std::max(o.cover_end, hi);
      }
      open[keep++] = o;
    }
    open.resize(keep);
    open.push_back(Open{k, b, en, 0, b});
    self[k] = d;
  }
}

}  // namespace jaxprof
