// Where an exported timeline goes. The writer (perfetto.cc) says what is on the timeline:
// processes, their tracks, slices with args, counters; a sink encodes it, as Chrome trace JSON
// (json_trace_sink.h) or as Perfetto's own protobuf (proto_trace_sink.h). Tracks are named by
// (pid, tid) pairs, as in Chrome traces; times are picoseconds from the profile's base.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "jaxprof/render/perfetto/perfetto_args.h"

namespace jaxprof {

// Flow arrows a slice starts or ends (0: none): from a host launch to its kernel, and from a
// collective's first arrival to its last (a collective kernel can be both launched and waited
// for, so the second kind has fields of its own).
struct SliceFlow {
  uint64_t out = 0;  // an arrow leaves this slice
  uint64_t in = 0;   // an arrow arrives at this slice
  // Arrows of jaxprof's own: a collective's arrival arrow, or the critical path's from one
  // segment to the next (the id says which, flow_event_name).
  uint64_t arrival_out = 0, arrival_in = 0;
};

// Id ranges of the arrows: launch arrows below kArrivalFlowIds (correlation id x 65536 + host
// + 1), collectives' arrival arrows from it, the critical path's from kPathFlowIds.
inline constexpr uint64_t kArrivalFlowIds = uint64_t{1} << 62;
inline constexpr uint64_t kPathFlowIds = uint64_t{3} << 61;

// The name of the flow events that carry jaxprof's own arrows in JSON (its reader skips them).
inline const char* flow_event_name(uint64_t id) {
  return id >= kPathFlowIds ? "jaxprof critical path" : "jaxprof collective arrival";
}

class TraceSink {
 public:
  virtual ~TraceSink() = default;

  // The trace's start: the profile's base instant (ns since the epoch).
  virtual void begin(int64_t base_ns) = 0;
  // An HloProto the trace carries so that jaxprof reads it back whole (JSON only).
  virtual void hlo_proto(std::string_view program_id_json, std::string_view module,
                         bool bare_module, std::string_view serialized) = 0;
  virtual void process(int pid, std::string_view name, std::string_view host) = 0;
  // A track of slices; `derived` marks tracks jaxprof made, which its reader leaves out.
  virtual void thread(int pid, int tid, std::string_view name, bool derived) = 0;
  // A counter track, always derived: `name` what it counts, `series` its value ("bytes" for
  // memory in use, a stat's name for a device's counters). Viewers name it "NAME SERIES", as
  // Perfetto names a Chrome trace's counter by its event and arg.
  virtual void counter_track(int pid, int tid, std::string_view name, std::string_view series) = 0;
  // `name_json`: the name as a JSON string literal when the caller has it at hand ("" = make it).
  virtual void slice(int pid, int tid, std::string_view name, std::string_view name_json,
                     int64_t start_ps, int64_t duration_ps, const TraceArgs* args,
                     SliceFlow flow) = 0;
  // A counter's value from time_ps on (written as an integer when it is one).
  virtual void counter(int pid, int tid, int64_t time_ps, double value) = 0;
  // After the last event: the notes on what was left out, in the trace's own metadata.
  virtual void end(const std::vector<std::string>& notes) = 0;
};

// A sink in front of another that passes everything on: what a filter or a transformation of the
// trace (a window, one clock for several hosts) derives from, overriding what it changes.
class ForwardingTraceSink : public TraceSink {
 public:
  explicit ForwardingTraceSink(TraceSink& inner) : inner_(inner) {}

  void begin(int64_t base_ns) override { inner_.begin(base_ns); }
  void hlo_proto(std::string_view program_id_json, std::string_view module, bool bare_module,
                 std::string_view serialized) override {
    inner_.hlo_proto(program_id_json, module, bare_module, serialized);
  }
  void process(int pid, std::string_view name, std::string_view host) override {
    inner_.process(pid, name, host);
  }
  void thread(int pid, int tid, std::string_view name, bool derived) override {
    inner_.thread(pid, tid, name, derived);
  }
  void counter_track(int pid, int tid, std::string_view name, std::string_view series) override {
    inner_.counter_track(pid, tid, name, series);
  }
  void slice(int pid, int tid, std::string_view name, std::string_view name_json, int64_t start_ps,
             int64_t duration_ps, const TraceArgs* args, SliceFlow flow) override {
    inner_.slice(pid, tid, name, name_json, start_ps, duration_ps, args, flow);
  }
  void counter(int pid, int tid, int64_t time_ps, double value) override {
    inner_.counter(pid, tid, time_ps, value);
  }
  void end(const std::vector<std::string>& notes) override { inner_.end(notes); }

 protected:
  TraceSink& inner_;
};

}  // namespace jaxprof
