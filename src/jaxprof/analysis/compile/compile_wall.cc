// Where a compile's time goes: each thread's self time (flatten), and the partition of the
// window's wall time among the threads' events (partition_wall).
#include "jaxprof/analysis/compile/compile_wall.h"

#include <algorithm>
#include <limits>
#include <map>
#include <utility>

namespace jaxprof::compile_detail {
namespace {

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

}  // namespace

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

int64_t partition_wall(std::vector<LineSegs>& segs, uint32_t launching, int64_t start, int64_t end,
                       bool share, CompileSteps& steps) {
  // The launching thread last, the busiest worker first.
  std::sort(segs.begin(), segs.end(), [&](const LineSegs& a, const LineSegs& b) {
    bool am = a.L == launching, bm = b.L == launching;
    if (am != bm) return bm;
    if (a.busy != b.busy) return a.busy > b.busy;
    return a.L < b.L;
  });
  std::vector<int64_t> cuts = {start, end};
  for (const LineSegs& ls : segs)
    for (const Seg& s : ls.segs) {
      cuts.push_back(s.a);
      cuts.push_back(s.b);
    }
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  std::vector<size_t> pos(segs.size(), 0);
  int64_t between = 0;
  auto give = [&](size_t k, uint32_t inc, int64_t ps) { steps.add_wall(segs[k].L, inc, ps); };
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
      if (segs[k].L == launching) {
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
  return between;
}

}  // namespace jaxprof::compile_detail
