// The exported timeline as Chrome trace JSON (ui.perfetto.dev, chrome://tracing), the format
// jaxprof reads back exactly: times are microseconds printed as exact decimals of the integer
// picoseconds, names are escaped so that the text may sit inside an HTML page.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <utility>

#include "jaxprof/render/perfetto/trace_sink.h"

namespace jaxprof {

class JsonTraceSink : public TraceSink {
 public:
  explicit JsonTraceSink(const std::function<void(std::string_view)>& sink) : sink_(sink) {}
  ~JsonTraceSink() override { flush(); }

  void begin(int64_t base_ns) override;
  void hlo_proto(std::string_view program_id_json, std::string_view module, bool bare_module,
                 std::string_view serialized) override;
  void process(int pid, std::string_view name, std::string_view host) override;
  void thread(int pid, int tid, std::string_view name, bool derived) override;
  void counter_track(int pid, int tid, std::string_view name, std::string_view series) override;
  void slice(int pid, int tid, std::string_view name, std::string_view name_json, int64_t start_ps,
             int64_t duration_ps, const TraceArgs* args, SliceFlow flow) override;
  void counter(int pid, int tid, int64_t time_ps, double value) override;
  void end(const std::vector<std::string>& notes) override;

 private:
  // Buffers output and hands it to the sink in large pieces.
  void out(std::string_view s) {
    buf_ += s;
    if (buf_.size() >= (1u << 20)) flush();
  }
  void flush() {
    if (!buf_.empty()) sink_(buf_);
    buf_.clear();
  }

  const std::function<void(std::string_view)>& sink_;
  std::string buf_;
  // Per counter track: its events' name and their arg's, as JSON literals.
  std::map<std::pair<int, int>, std::pair<std::string, std::string>> counter_names_;
};

}  // namespace jaxprof
