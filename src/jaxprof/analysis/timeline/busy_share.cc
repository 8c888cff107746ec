#include "jaxprof/analysis/timeline/busy_share.h"

#include <algorithm>

namespace jaxprof {

namespace {

// A stretch of one line during which one event is the innermost open one.
struct Piece {
  int64_t begin, end;
  uint32_t event;
};

// The innermost-event pieces of one line, in time order and disjoint. A stack of open events,
// popped lazily: an event below the top that already ended is dropped when it surfaces.
void line_pieces(const Events& ev, const Line& line, const std::function<bool(uint32_t)>& counts,
                 std::vector<Piece>& out) {
  std::vector<uint32_t> open;
  int64_t t = 0;
  auto advance = [&](int64_t until) {
    while (!open.empty()) {
      uint32_t top = open.back();
      int64_t end = ev.end_ps(top);
      if (end > until) break;
      if (end > t) out.push_back({t, end, top});
      t = std::max(t, end);
      open.pop_back();
    }
    if (!open.empty() && until > t) out.push_back({t, until, open.back()});
    t = std::max(t, until);
  };
  for (uint32_t e = line.first_event; e < line.first_event + line.event_count; ++e) {
    if (!counts(e) || ev.duration_ps[e] <= 0) continue;
    int64_t s = ev.start_ps[e];
    if (open.empty()) t = s;
    advance(s);
    open.push_back(e);
  }
  advance(INT64_MAX);
}

// line_pieces on the device's own clock, for a line whose events carry it (Line::device_clock;
// an event without it keeps its timeline span): the device clock need not order events as the
// timeline does, so they are taken in device-clock order.
void device_clock_pieces(const Events& ev, const Line& line,
                         const std::function<bool(uint32_t)>& counts, std::vector<Piece>& out) {
  struct Span {
    int64_t begin, end;
    uint32_t event;
  };
  std::vector<Span> spans;
  for (uint32_t e = line.first_event; e < line.first_event + line.event_count; ++e) {
    if (!counts(e)) continue;
    const bool own = ev.device_duration_ps[e] != Events::kNoStat;
    int64_t b = own ? ev.device_start_ps[e] : ev.start_ps[e];
    int64_t d = own ? ev.device_duration_ps[e] : ev.duration_ps[e];
    if (d > 0) spans.push_back({b, b + d, e});
  }
  std::stable_sort(spans.begin(), spans.end(), [](const Span& x, const Span& y) {
    if (x.begin != y.begin) return x.begin < y.begin;
    return x.end > y.end;
  });
  std::vector<const Span*> open;
  int64_t t = 0;
  auto advance = [&](int64_t until) {
    while (!open.empty()) {
      const Span* top = open.back();
      if (top->end > until) break;
      if (top->end > t) out.push_back({t, top->end, top->event});
      t = std::max(t, top->end);
      open.pop_back();
    }
    if (!open.empty() && until > t) out.push_back({t, until, open.back()->event});
    t = std::max(t, until);
  };
  for (const Span& s : spans) {
    if (open.empty()) t = s.begin;
    advance(s.begin);
    open.push_back(&s);
  }
  advance(INT64_MAX);
}

}  // namespace

void share_busy_time(const Events& ev, const std::vector<Line>& all_lines,
                     const std::vector<uint32_t>& lines,
                     const std::function<bool(uint32_t)>& counts,
                     const std::function<void(uint32_t, int64_t)>& add) {
  std::vector<std::vector<Piece>> per_line;
  std::vector<Piece> pieces;
  // One line (a TPU's XLA Ops) on the device clock: its pieces are measured on that clock. Lines
  // that must be swept together share the timeline clock, the only one they have in common.
  if (lines.size() == 1 && all_lines[lines[0]].device_clock) {
    device_clock_pieces(ev, all_lines[lines[0]], counts, pieces);
    for (const Piece& p : pieces) add(p.event, p.end - p.begin);
    return;
  }
  for (uint32_t li : lines) {
    pieces.clear();
    line_pieces(ev, all_lines[li], counts, pieces);
    if (!pieces.empty()) per_line.push_back(pieces);
  }
  if (per_line.size() == 1) {  // the common case: nothing to share
    for (const Piece& p : per_line[0]) add(p.event, p.end - p.begin);
    return;
  }
  // Sweep the piece boundaries of all lines; at most one piece per line is active at a time.
  struct Edge {
    int64_t t;
    bool start;
    uint32_t line, event;
  };
  std::vector<Edge> edges;
  for (uint32_t l = 0; l < per_line.size(); ++l)
    for (const Piece& p : per_line[l]) {
      edges.push_back({p.begin, true, l, p.event});
      edges.push_back({p.end, false, l, p.event});
    }
  std::sort(edges.begin(), edges.end(), [](const Edge& a, const Edge& b) {
    if (a.t != b.t) return a.t < b.t;
    return a.start < b.start;  // ends first: touching pieces never share an instant
  });
  std::vector<std::pair<uint32_t, uint32_t>> active;  // (line, event), sorted by line
  int64_t prev = 0;
  for (const Edge& e : edges) {
    if (!active.empty() && e.t > prev) {
      int64_t len = e.t - prev, k = static_cast<int64_t>(active.size());
      int64_t q = len / k, r = len % k;
      for (int64_t i = 0; i < k; ++i) {
        int64_t share = q + (i < r ? 1 : 0);
        if (share > 0) add(active[i].second, share);
      }
    }
    prev = e.t;
    std::pair<uint32_t, uint32_t> item{e.line, e.event};
    auto it = std::lower_bound(active.begin(), active.end(), item);
    if (e.start)
      active.insert(it, item);
    else if (it != active.end() && *it == item)
      active.erase(it);
  }
}

}  // namespace jaxprof
