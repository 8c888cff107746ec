// The sweep against the scan of open events it replaced, on many generated lines, and its pace.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <numeric>
#include <random>

#include "jaxprof/analysis/ops/self_time.h"
#include "jaxprof/analysis/ops/self_time_sweep.h"

namespace jaxprof {
namespace {

// The scan of open events as it was before the sweep: every event visits every open one.
std::vector<int64_t> reference(const std::vector<uint32_t>& order, const std::vector<int64_t>& b,
                               const std::vector<int64_t>& d, const std::vector<uint8_t>* part,
                               int64_t tol) {
  struct Open {
    uint32_t index;
    int64_t begin, end, covered, cover_end;
  };
  std::vector<int64_t> self(b.size(), 0);
  std::vector<Open> open;
  for (uint32_t i : order) {
    if (part && !(*part)[i]) continue;
    const int64_t en = b[i] + d[i];
    size_t keep = 0;
    for (Open o : open) {
      if (o.end + tol < b[i]) continue;
      if (b[i] >= o.begin - tol && en <= o.end + tol) {
        const int64_t lo = std::max({b[i], o.begin, o.cover_end}), hi = std::min(en, o.end);
        if (hi > lo) {
          o.covered += hi - lo;
          self[o.index] = (o.end - o.begin) - o.covered;
        }
        o.cover_end = std::max(o.cover_end, hi);
      }
      open[keep++] = o;
    }
    open.resize(keep);
    open.push_back(Open{i, b[i], en, 0, b[i]});
    self[i] = d[i];
  }
  return self;
}

struct Spans {
  std::vector<int64_t> b, d;
};

// Nesting up to `depth` deep: children start inside their parent and end inside it or, by up to
// `jitter`, past it; siblings may overlap their predecessor by up to `jitter`; some repeat the
// interval before them (stacked copies); starts and durations come on a coarse grid so that
// equal starts, equal ends and zero durations are common.
Spans nested(std::mt19937_64& rng, size_t n, size_t depth, int64_t jitter) {
  Spans s;
  std::vector<std::pair<int64_t, int64_t>> stack;  // open [b, e)
  int64_t cursor = 0;
  auto r = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  while (s.b.size() < n) {
    if (!stack.empty() && (stack.size() >= depth || r(0, 3) == 0)) {
      cursor = std::max(cursor, stack.back().second - r(0, jitter));
      stack.pop_back();
      continue;
    }
    int64_t lo = cursor, hi = cursor + r(0, 8) * 10000;
    if (!stack.empty()) {
      const auto [pb, pe] = stack.back();
      lo = std::max(lo, pb) + r(0, 2) * r(0, 3) * 100;
      hi = std::min(pe, std::max(lo, pe - r(0, 3) * r(0, 2) * 1000)) + r(-jitter, jitter);
    }
    if (r(0, 9) == 0 && !s.b.empty()) lo = s.b.back(), hi = s.b.back() + s.d.back();
    s.b.push_back(lo);
    s.d.push_back(std::max<int64_t>(0, hi - lo));
    stack.push_back({lo, lo + s.d.back()});
    cursor = lo;
  }
  return s;
}

// Intervals thrown on a small range: partial overlaps everywhere.
Spans scattered(std::mt19937_64& rng, size_t n) {
  Spans s;
  const int64_t range = std::uniform_int_distribution<int64_t>(1, 4000)(rng);
  for (size_t i = 0; i < n; ++i) {
    s.b.push_back(std::uniform_int_distribution<int64_t>(0, range)(rng));
    s.d.push_back(std::uniform_int_distribution<int64_t>(0, range / 2)(rng));
  }
  return s;
}

// (start asc, duration desc, index asc), as lines are ordered.
std::vector<uint32_t> line_order(const Spans& s) {
  std::vector<uint32_t> o(s.b.size());
  std::iota(o.begin(), o.end(), 0u);
  std::stable_sort(o.begin(), o.end(), [&](uint32_t x, uint32_t y) {
    return s.b[x] != s.b[y] ? s.b[x] < s.b[y] : s.d[x] > s.d[y];
  });
  return o;
}

Spans permuted(const Spans& s, const std::vector<uint32_t>& o) {
  Spans p;
  for (uint32_t i : o) p.b.push_back(s.b[i]), p.d.push_back(s.d[i]);
  return p;
}

TEST(SelfTimeSweep, EqualsTheScanOfOpenEventsOnGeneratedLines) {
  std::mt19937_64 rng(20240611);
  const int64_t tols[] = {0, 1, 7, 100, 999, 1000, 1001, 5000, 30000};
  size_t lines = 0, deep = 0;
  for (int round = 0; round < 4000; ++round) {
    auto r = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
    const int64_t tol = r(0, 3) == 0 ? r(0, 20000) : tols[r(0, 8)];
    const size_t n = static_cast<size_t>(round % 50 == 0 ? r(1000, 3000) : r(1, 200));
    const size_t depth = static_cast<size_t>(round % 50 == 0 ? r(300, 1000) : r(1, 60));
    const Spans raw = r(0, 4) == 0 ? scattered(rng, n) : nested(rng, n, depth, r(0, 2) * r(0, 3000));
    deep += depth >= 300;
    // Lines in their order; some with equal starts in any duration order; a few not in order.
    const int shape = static_cast<int>(r(0, 9));
    Spans s = shape == 0 ? raw : permuted(raw, line_order(raw));
    if (shape == 1) s = permuted(raw, line_order(raw)), std::reverse(s.d.begin(), s.d.end());
    if (shape == 2 && !s.d.empty()) s.d[static_cast<size_t>(r(0, static_cast<int64_t>(n) - 1))] = -r(1, 50);
    std::vector<uint8_t> mask(n, 1);
    const bool masked = r(0, 2) == 0;
    for (auto& m : mask) m = r(0, 3) != 0;
    Events ev;
    ev.resize(n);
    for (size_t i = 0; i < n; ++i) ev.start_ps[i] = s.b[i], ev.duration_ps[i] = s.d[i];
    std::vector<uint32_t> identity(n);
    std::iota(identity.begin(), identity.end(), 0u);
    std::vector<int64_t> self;
    compute_self_times(ev, 0, static_cast<uint32_t>(n), self, masked ? &mask : nullptr, tol);
    ASSERT_EQ(self, reference(identity, s.b, s.d, masked ? &mask : nullptr, tol))
        << "round " << round << " tol " << tol;
    ++lines;

    // The same spans on the device clock of a line whose timeline order is shuffled; some
    // events without a device clock keep their timeline span.
    Events dev;
    dev.resize(n);
    Spans used = raw;
    std::vector<uint32_t> shuffled(n);
    std::iota(shuffled.begin(), shuffled.end(), 0u);
    if (r(0, 1)) std::shuffle(shuffled.begin(), shuffled.end(), rng);
    for (size_t k = 0; k < n; ++k) {
      const uint32_t i = shuffled[k];
      dev.start_ps[k] = static_cast<int64_t>(k) * 10, dev.duration_ps[k] = 5;
      dev.device_start_ps[k] = raw.b[i], dev.device_duration_ps[k] = raw.d[i];
      if (r(0, 19) == 0) dev.device_duration_ps[k] = Events::kNoStat;
      used.b[k] = dev.device_duration_ps[k] == Events::kNoStat ? dev.start_ps[k] : raw.b[i];
      used.d[k] = dev.device_duration_ps[k] == Events::kNoStat ? dev.duration_ps[k] : raw.d[i];
    }
    Line line;
    line.first_event = 0;
    line.event_count = static_cast<uint32_t>(n);
    line.device_clock = true;
    compute_op_self_times(dev, line, self, masked ? &mask : nullptr, tol);
    ASSERT_EQ(self, reference(line_order(used), used.b, used.d, masked ? &mask : nullptr, tol))
        << "device clock, round " << round << " tol " << tol;
    ++lines;
  }
  EXPECT_EQ(lines, 8000u);
  EXPECT_GT(deep, 40u);
}

// 100,000 events nested 1,000 deep (and copies of one op stacked on each other) in milliseconds:
// the scan took about depth x events steps.
TEST(SelfTimeSweep, ThousandDeepNestingIsFast) {
  const size_t n = 100000, depth = 1000;
  std::vector<int64_t> b(n), e(n), self(n), stacked(n);
  for (size_t k = 0; k < n; ++k) {
    const size_t level = k % depth, chain = k / depth;
    const int64_t origin = static_cast<int64_t>(chain) * 10000000;
    b[k] = origin + static_cast<int64_t>(level) * 1000;
    // Odd levels end 500 ps past their parent: jitter within the tolerance.
    e[k] = origin + 5000000 - static_cast<int64_t>(level) * 1000 + (level % 2) * 1500;
  }
  std::vector<int64_t> stacked_b(n, 0), stacked_e(n, 1000000);
  const auto t0 = std::chrono::steady_clock::now();
  sweep_self_times(b.data(), e.data(), n, kNestingTolerancePs, self.data());
  sweep_self_times(stacked_b.data(), stacked_e.data(), n, kNestingTolerancePs, stacked.data());
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::printf("100,000 events 1,000 deep, twice: %.1f ms\n", ms);
  EXPECT_LT(ms, 200.0);
  EXPECT_EQ(stacked[n - 1], 1000000);
  EXPECT_EQ(stacked[0], 0);
  EXPECT_EQ(self[0], 1000);
  // And the same figures as the scan (which takes a while longer).
  std::vector<uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  std::vector<int64_t> d(n);
  for (size_t k = 0; k < n; ++k) d[k] = e[k] - b[k];
  EXPECT_EQ(self, reference(order, b, d, nullptr, kNestingTolerancePs));
}

}  // namespace
}  // namespace jaxprof
