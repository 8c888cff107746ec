#include "jaxprof/render/perfetto/trace_window.h"

#include <fmt/format.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>

#include "jaxprof/common/error.h"
#include "jaxprof/common/units.h"
#include "jaxprof/render/perfetto/json_trace_sink.h"
#include "jaxprof/render/perfetto/perfetto.h"
#include "jaxprof/render/perfetto/proto_trace_sink.h"

namespace jaxprof {

std::string WindowCounts::note() const {
  return fmt::format("kept {} of {} slices, {} of {} counter points, {} of {} arrows", slices_kept,
                     slices, counter_points_kept, counter_points, flows_kept, flows);
}

void WindowTraceSink::process(int pid, std::string_view name, std::string_view host) {
  close_counter();
  inner_.process(pid, name, host);
}

void WindowTraceSink::thread(int pid, int tid, std::string_view name, bool derived) {
  close_counter();
  inner_.thread(pid, tid, name, derived);
}

void WindowTraceSink::counter_track(int pid, int tid, std::string_view name,
                                    std::string_view series) {
  close_counter();
  inner_.counter_track(pid, tid, name, series);
  open_ = {pid, tid};
}

void WindowTraceSink::slice(int pid, int tid, std::string_view name, std::string_view name_json,
                            int64_t start_ps, int64_t duration_ps, const TraceArgs* args,
                            SliceFlow flow) {
  ++counts_.slices;
  if (!w_.keeps(start_ps, duration_ps)) return;
  ++counts_.slices_kept;
  inner_.slice(pid, tid, name, name_json, start_ps, duration_ps, args,
               {keep_flow(flow.out), keep_flow(flow.in), keep_flow(flow.arrival_out),
                keep_flow(flow.arrival_in)});
}

// A track's points come in time order: the last one before the window is held back and written
// at the window's start, those inside are written, those after it dropped.
void WindowTraceSink::counter(int pid, int tid, int64_t time_ps, double value) {
  ++counts_.counter_points;
  if (time_ps < w_.begin_ps) {
    open_.pending = true;
    open_.value = value;
    return;
  }
  if (time_ps > w_.end_ps) return;
  if (open_.pending && !open_.started && time_ps > w_.begin_ps)
    inner_.counter(pid, tid, w_.begin_ps, open_.value);
  open_.started = true;
  ++counts_.counter_points_kept;
  inner_.counter(pid, tid, time_ps, value);
}

// A track whose every point came before the window still holds its last value through it.
void WindowTraceSink::close_counter() {
  if (open_.pending && !open_.started)
    inner_.counter(open_.pid, open_.tid, w_.begin_ps, open_.value);
  open_ = {};
}

void WindowTraceSink::end(const std::vector<std::string>& notes) {
  close_counter();
  counts_.flows_kept = flows_.size();
  std::vector<std::string> all = notes;
  std::string end = w_.end_ps == std::numeric_limits<int64_t>::max()
                        ? std::string("its end")
                        : ps_to_ns_exact(w_.end_ps) + " ns";
  all.push_back(fmt::format("window ({}) [{} ns, {}] of the profile's time: {}", w_.label,
                            ps_to_ns_exact(w_.begin_ps), end, counts_.note()));
  inner_.end(all);
}

namespace {

// The first pass: the arrows whose start and end both lie on slices the window keeps.
class FlowScanSink : public TraceSink {
 public:
  explicit FlowScanSink(const TraceWindow& w) : w_(w) {}
  void begin(int64_t) override {}
  void hlo_proto(std::string_view, std::string_view, bool, std::string_view) override {}
  void process(int, std::string_view, std::string_view) override {}
  void thread(int, int, std::string_view, bool) override {}
  void counter_track(int, int, std::string_view, std::string_view) override {}
  void slice(int, int, std::string_view, std::string_view, int64_t start_ps, int64_t duration_ps,
             const TraceArgs*, SliceFlow flow) override {
    if (!flow.out && !flow.in && !flow.arrival_out && !flow.arrival_in) return;
    bool kept = w_.keeps(start_ps, duration_ps);
    for (auto [id, leaves] : {std::pair{flow.out, true}, std::pair{flow.arrival_out, true},
                              std::pair{flow.in, false}, std::pair{flow.arrival_in, false}}) {
      if (!id) continue;
      (leaves ? out_ : in_).insert(id);
      if (kept) (leaves ? kept_out_ : kept_in_).insert(id);
    }
  }
  void counter(int, int, int64_t, double) override {}
  void end(const std::vector<std::string>&) override {}

  uint64_t flows() const {
    return std::count_if(out_.begin(), out_.end(), [&](uint64_t id) { return in_.count(id); });
  }
  std::set<uint64_t> kept() const {
    std::set<uint64_t> both;
    std::set_intersection(kept_out_.begin(), kept_out_.end(), kept_in_.begin(), kept_in_.end(),
                          std::inserter(both, both.end()));
    return both;
  }

 private:
  const TraceWindow& w_;
  std::set<uint64_t> out_, in_, kept_out_, kept_in_;
};

}  // namespace

PerfettoSummary write_perfetto_window_file(const Profile& profile, const std::string& path,
                                           TraceFormat format, const TraceWindow& window,
                                           WindowCounts& counts, const PerfettoOptions& options) {
  FlowScanSink scan(window);
  write_perfetto(profile, scan, options);
  counts = {};
  counts.flows = scan.flows();
  const bool proto = trace_format_of(path, format) == TraceFormat::kProto;
  return stream_to_file(path, [&](const std::function<void(std::string_view)>& piece) {
    if (proto) {
      ProtoTraceSink inner(piece, /*compress=*/!path.ends_with(".gz"));
      WindowTraceSink sink(inner, window, scan.kept(), counts);
      return write_perfetto(profile, sink, options);
    }
    JsonTraceSink inner(piece);
    WindowTraceSink sink(inner, window, scan.kept(), counts);
    return write_perfetto(profile, sink, options);
  });
}

}  // namespace jaxprof
