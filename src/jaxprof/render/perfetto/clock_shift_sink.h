// Several hosts on one clock: a sink in front of the real one that moves every time of a host's
// processes by that host's clock offset (analysis/hosts: when collectives end on each host), so
// that an instant on one host's track lines up with the same instant on another's. The offsets
// and how far each may be off go into the trace's notes.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "jaxprof/analysis/hosts/host_clocks.h"
#include "jaxprof/render/perfetto/trace_sink.h"

namespace jaxprof {

class ClockShiftSink : public ForwardingTraceSink {
 public:
  // `clocks` by host name; a host not in it keeps its recorded clock (and the notes say so).
  ClockShiftSink(TraceSink& inner, std::map<std::string, HostClock> clocks)
      : ForwardingTraceSink(inner), clocks_(std::move(clocks)) {}

  void process(int pid, std::string_view name, std::string_view host) override;
  void slice(int pid, int tid, std::string_view name, std::string_view name_json, int64_t start_ps,
             int64_t duration_ps, const TraceArgs* args, SliceFlow flow) override {
    inner_.slice(pid, tid, name, name_json, start_ps - shift(pid), duration_ps, args, flow);
  }
  void counter(int pid, int tid, int64_t time_ps, double value) override {
    inner_.counter(pid, tid, time_ps - shift(pid), value);
  }
  void end(const std::vector<std::string>& notes) override;

 private:
  int64_t shift(int pid) const {
    auto it = by_pid_.find(pid);
    return it == by_pid_.end() ? 0 : it->second;
  }

  const std::map<std::string, HostClock> clocks_;
  std::unordered_map<int, int64_t> by_pid_;
  std::map<std::string, bool> seen_;  // hosts with processes: whether each had an offset
};

// The note that says how the hosts were put on one clock (also printed on stderr).
std::string clock_alignment_note(const std::map<std::string, HostClock>& clocks);

}  // namespace jaxprof
