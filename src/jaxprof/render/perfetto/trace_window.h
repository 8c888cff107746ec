// A window of the exported timeline (`export --steps A:B`, `--time START:END`): only the slices
// that overlap it, kept whole; counters clipped to it (the value in effect at its start, then its
// points inside); arrows whose both ends are kept. The writer (perfetto.cc) writes the whole
// capture; the window is a sink in front of the real one, and the file is written in two passes:
// the first finds the arrows whose both ends fall in the window, the second writes.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "jaxprof/model/profile.h"
#include "jaxprof/render/perfetto/perfetto.h"
#include "jaxprof/render/perfetto/trace_sink.h"

namespace jaxprof {

// Picoseconds from the profile's base, [begin_ps, end_ps].
struct TraceWindow {
  int64_t begin_ps = 0, end_ps = 0;
  std::string label;  // how it was asked for ("steps 3:5", "time 1ms:2ms"), for the note

  // A slice is kept when it overlaps the window; an instant when it lies in it.
  bool keeps(int64_t start_ps, int64_t duration_ps) const {
    if (duration_ps <= 0) return start_ps >= begin_ps && start_ps <= end_ps;
    return start_ps < end_ps && start_ps + duration_ps > begin_ps;
  }
};

// What the window kept of what the writer wrote.
struct WindowCounts {
  uint64_t slices = 0, slices_kept = 0;
  uint64_t counter_points = 0, counter_points_kept = 0;
  uint64_t flows = 0, flows_kept = 0;
  std::string note() const;
};

// Passes on what the window keeps to `inner`, and adds the window's note at the end.
class WindowTraceSink : public ForwardingTraceSink {
 public:
  // `flows`: the arrows to keep (both ends in the window); others are cut from their slices.
  WindowTraceSink(TraceSink& inner, const TraceWindow& window, std::set<uint64_t> flows,
                  WindowCounts& counts)
      : ForwardingTraceSink(inner), w_(window), flows_(std::move(flows)), counts_(counts) {}

  void process(int pid, std::string_view name, std::string_view host) override;
  void thread(int pid, int tid, std::string_view name, bool derived) override;
  void counter_track(int pid, int tid, std::string_view name, std::string_view series) override;
  void slice(int pid, int tid, std::string_view name, std::string_view name_json, int64_t start_ps,
             int64_t duration_ps, const TraceArgs* args, SliceFlow flow) override;
  void counter(int pid, int tid, int64_t time_ps, double value) override;
  void end(const std::vector<std::string>& notes) override;

 private:
  // The counter track being written: its value before the window, not passed on yet.
  struct OpenCounter {
    int pid = 0, tid = 0;
    bool pending = false, started = false;
    double value = 0;
  };
  void close_counter();
  uint64_t keep_flow(uint64_t id) const { return id && flows_.count(id) ? id : 0; }

  const TraceWindow w_;
  const std::set<uint64_t> flows_;
  WindowCounts& counts_;
  OpenCounter open_;
};

// Writes the window of the trace to `path` as write_perfetto_file does (format by name, .gz
// compresses, streamed); `counts` says what was kept.
PerfettoSummary write_perfetto_window_file(const Profile& profile, const std::string& path,
                                           TraceFormat format, const TraceWindow& window,
                                           WindowCounts& counts,
                                           const PerfettoOptions& options = {});

}  // namespace jaxprof
