#include "jaxprof/analysis/ops/self_time_sweep.h"

#include <algorithm>
#include <vector>

namespace jaxprof {

namespace {

struct Segment {
  int64_t lo, hi;
};

// The union of the intervals seen so far as disjoint segments, leftmost last; every interval
// added starts at or before all earlier ones, so a merge only ever touches the last segments.
class SuffixUnion {
 public:
  // Length of the union below `hi` (every segment starts at or after the caller's begin).
  int64_t length_below(int64_t hi) const {
    // Segments are in descending lo: those starting below hi are the last ones.
    auto it = std::partition_point(segs_.begin(), segs_.end(),
                                   [&](const Segment& s) { return s.lo >= hi; });
    if (it == segs_.end()) return 0;
    const size_t j = static_cast<size_t>(it - segs_.begin());
    return before_.back() - before_[j] - std::max<int64_t>(0, it->hi - hi);
  }

  void add(int64_t lo, int64_t hi) {
    if (hi <= lo) return;
    while (!segs_.empty() && segs_.back().lo <= hi) {
      hi = std::max(hi, segs_.back().hi);
      segs_.pop_back();
      before_.pop_back();
    }
    segs_.push_back({lo, hi});
    before_.push_back(before_.back() + (hi - lo));
  }

 private:
  std::vector<Segment> segs_;
  std::vector<int64_t> before_{0};  // before_[i]: total length of segs_[0, i)
};

// The union of [begin[q], min(end[q], end[k])) over q > k with end[q] <= end[k] + tol, taken
// in start order, as the open-event scan takes it.
int64_t covered_directly(const int64_t* begin, const int64_t* end, size_t n, int64_t tol,
                         size_t k) {
  const int64_t hi = end[k], limit = end[k] + tol;
  int64_t covered = 0, cover_end = begin[k];
  for (size_t q = k + 1; q < n && begin[q] < hi; ++q) {
    if (end[q] > limit) continue;
    const int64_t l = std::max(begin[q], cover_end), h = std::min(end[q], hi);
    if (h > l) covered += h - l;
    cover_end = std::max(cover_end, h);
  }
  return covered;
}

}  // namespace

// Why this equals the scan: with starts nondecreasing, durations >= 0 and tol >= 0, an open
// event leaves the scan only when it ends (plus tol) before the current start, and then no later
// event (which ends after that start) could nest in it, so leaving changes nothing. A later event
// q nests in k exactly when end[q] <= end[k] + tol (begin[q] >= begin[k] always holds), and the
// scan's running union over nested events in start order is their union's length clipped to k.
// Call q a crosser of k when it starts before end[k] and ends beyond end[k] + tol. Without one,
// every later event that reaches into [begin[k], end[k]) nests in k, so k's covered length is that
// of the union of all later events below end[k]: the SuffixUnion. The first later event ending
// beyond end[k] + tol starts no later than any other such event, so it alone decides whether k
// has a crosser; the prefix maxima of end over the later events find it by binary search.
void sweep_self_times(const int64_t* begin, const int64_t* end, size_t n, int64_t tol,
                      int64_t* self) {
  SuffixUnion later;
  // Prefix maxima of end[] over the later events, nearest last: their ends strictly decrease
  // along the vector.
  std::vector<uint32_t> maxima;
  for (size_t k = n; k-- > 0;) {
    const int64_t lo = begin[k], hi = end[k], limit = hi + tol;
    auto far = std::partition_point(maxima.begin(), maxima.end(),
                                    [&](uint32_t q) { return end[q] > limit; });
    const bool crossed = far != maxima.begin() && begin[*(far - 1)] < hi;
    const int64_t covered =
        crossed ? covered_directly(begin, end, n, tol, k) : later.length_below(hi);
    self[k] = (hi - lo) - covered;
    later.add(lo, hi);
    while (!maxima.empty() && end[maxima.back()] <= hi) maxima.pop_back();
    maxima.push_back(static_cast<uint32_t>(k));
  }
}

}  // namespace jaxprof
