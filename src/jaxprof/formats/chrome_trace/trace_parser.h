// The Chrome trace import's parser: one event's members (Fields, from the tokenizer) to what the
// model keeps of it: its phase decides what it is, its times become checked picoseconds, its
// names, HLO op, module and device clock become a Record for the tracker.
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

#include "jaxprof/formats/chrome_trace/intern_cache.h"
#include "jaxprof/formats/chrome_trace/trace_import.h"
#include "jaxprof/formats/chrome_trace/trace_tokenizer.h"
#include "jaxprof/formats/chrome_trace/trace_tracker.h"
#include "jaxprof/model/profile.h"

namespace jaxprof::chrome_trace {

// "program_id" as a string or number; XLA ids are unsigned 64-bit.
ProgramId program_of(std::string_view text);

class TraceParser final : public EventSink {
 public:
  // Names go to `profile` (through `cache`); each event with args gets its place in `spans`.
  TraceParser(Profile& profile, TraceTracker& tracker, InternCache& cache,
              std::vector<StatsSpan>& spans)
      : p_(&profile), tracker_(&tracker), cache_(&cache), spans_(&spans) {}

  void event(const Fields& f, size_t offset, size_t length) override;
  void not_an_event() override { ++tracker_->ignored.malformed; }

 private:
  Record record_of(const Fields& f, size_t offset, size_t length);

  Profile* p_;
  TraceTracker* tracker_;
  InternCache* cache_;
  std::vector<StatsSpan>* spans_;
};

}  // namespace jaxprof::chrome_trace
