#include "jaxprof/analysis/timeline/intervals.h"

#include <algorithm>

namespace jaxprof {

namespace {
constexpr size_t kMaxRuns = 16;
}  // namespace

void merge_intervals(std::vector<Interval>& v) {
  std::erase_if(v, [](const Interval& i) { return i.end <= i.begin; });
  if (v.empty()) return;
  auto by_begin = [](const Interval& a, const Interval& b) { return a.begin < b.begin; };
  // Callers mostly append a few sorted runs (one per line or kind): merging the runs is linear
  // per run where a sort is not.
  std::vector<size_t> runs = {0};
  for (size_t i = 1; i < v.size() && runs.size() <= kMaxRuns; ++i)
    if (v[i].begin < v[i - 1].begin) runs.push_back(i);
  if (runs.size() > kMaxRuns) {
    std::sort(v.begin(), v.end(), by_begin);
  } else {
    runs.push_back(v.size());
    while (runs.size() > 2) {
      std::vector<size_t> next = {0};
      for (size_t r = 2; r < runs.size(); r += 2) {
        std::inplace_merge(v.begin() + runs[r - 2], v.begin() + runs[r - 1], v.begin() + runs[r],
                           by_begin);
        next.push_back(runs[r]);
      }
      if (runs.size() % 2 == 0) next.push_back(runs.back());
      runs = std::move(next);
    }
  }
  size_t out = 0;
  for (size_t i = 1; i < v.size(); ++i) {
    if (v[i].begin <= v[out].end) {
      v[out].end = std::max(v[out].end, v[i].end);
    } else {
      v[++out] = v[i];
    }
  }
  v.resize(out + 1);
}

int64_t union_length(std::vector<Interval>& v) {
  merge_intervals(v);
  int64_t total = 0;
  for (const Interval& i : v) total += i.length();
  return total;
}

int64_t intersection_length(const std::vector<Interval>& a, const std::vector<Interval>& b) {
  int64_t total = 0;
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    int64_t lo = std::max(a[i].begin, b[j].begin);
    int64_t hi = std::min(a[i].end, b[j].end);
    if (hi > lo) total += hi - lo;
    (a[i].end < b[j].end) ? ++i : ++j;
  }
  return total;
}

std::vector<Interval> subtract_intervals(const std::vector<Interval>& a,
                                         const std::vector<Interval>& b) {
  std::vector<Interval> out;
  size_t j = 0;
  for (Interval cur : a) {
    while (j < b.size() && b[j].end <= cur.begin) ++j;
    size_t k = j;
    while (k < b.size() && b[k].begin < cur.end) {
      if (b[k].begin > cur.begin) out.push_back({cur.begin, b[k].begin});
      cur.begin = std::max(cur.begin, b[k].end);
      if (cur.begin >= cur.end) break;
      ++k;
    }
    if (cur.begin < cur.end) out.push_back(cur);
  }
  return out;
}

}  // namespace jaxprof
