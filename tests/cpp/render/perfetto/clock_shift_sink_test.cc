// Several hosts on one clock: each host's slices and counter points move by its offset, a host
// without one keeps its clock and is named in the notes, and the alignment note lists the
// hosts furthest off first.
#include "jaxprof/render/perfetto/clock_shift_sink.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace jaxprof {
namespace {

// Keeps the times it is given, by pid.
class RecordingSink : public TraceSink {
 public:
  void begin(int64_t) override {}
  void hlo_proto(std::string_view, std::string_view, bool, std::string_view) override {}
  void process(int, std::string_view, std::string_view) override {}
  void thread(int, int, std::string_view, bool) override {}
  void counter_track(int, int, std::string_view, std::string_view) override {}
  void slice(int pid, int, std::string_view, std::string_view, int64_t start_ps,
             int64_t duration_ps, const TraceArgs*, SliceFlow) override {
    times.push_back({pid, start_ps, duration_ps});
  }
  void counter(int pid, int, int64_t time_ps, double value) override {
    times.push_back({pid, time_ps, static_cast<int64_t>(value)});
  }
  void end(const std::vector<std::string>& n) override { notes = n; }

  struct Time {
    int pid;
    int64_t at, second;
    bool operator==(const Time&) const = default;
  };
  std::vector<Time> times;
  std::vector<std::string> notes;
};

TEST(ClockShiftSink, MovesEachHostByItsOffset) {
  RecordingSink inner;
  ClockShiftSink sink(inner, {{"a", {5000, 1000}}, {"b", {-2000, 1000}}});
  sink.process(1, "/host:CPU", "a");
  sink.process(2, "/host:CPU", "b");
  sink.process(3, "/host:CPU", "c");  // no estimate: its recorded clock
  sink.slice(1, 1, "x", "", 10000, 300, nullptr, {});
  sink.slice(2, 1, "x", "", 10000, 300, nullptr, {});
  sink.slice(3, 1, "x", "", 10000, 300, nullptr, {});
  sink.counter(2, 9, 7000, 42);
  sink.end({"earlier note"});
  using T = RecordingSink::Time;
  EXPECT_EQ(inner.times,
            (std::vector<T>{{1, 5000, 300}, {2, 12000, 300}, {3, 10000, 300}, {2, 9000, 42}}));
  ASSERT_EQ(inner.notes.size(), 2u);
  EXPECT_EQ(inner.notes[0], "earlier note");
  EXPECT_NE(inner.notes[1].find("1 host kept its recorded clock"), std::string::npos);
  EXPECT_NE(inner.notes[1].find(": c"), std::string::npos);
}

TEST(ClockShiftSink, NoteListsTheHostsFurthestOffFirst) {
  std::string note = clock_alignment_note({{"a", {5000000, 1000}}, {"b", {-9000000, 3000}}});
  EXPECT_NE(note.find("2 hosts put on one clock"), std::string::npos);
  EXPECT_NE(note.find("within 3.0 ns"), std::string::npos) << note;
  EXPECT_LT(note.find("b +9"), note.find("a -5")) << note;
}

}  // namespace
}  // namespace jaxprof
