// The Perfetto export: exact microsecond decimals, HTML-safe JSON strings, category segments that
// tile each device's span with the timeline's numbers, and event counts on the JAX captures.
#include "jaxprof/render/perfetto/perfetto.h"

#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "all_work.h"
#include "jaxprof/analysis/ops/ops.h"
#include "jaxprof/analysis/timeline/timeline.h"
#include "jaxprof/analysis/timeline/timeline_segments.h"
#include "jaxprof/common/units.h"
#include "jaxprof/formats/load.h"
#include "jaxprof/render/perfetto/json_trace_sink.h"
#include "test_paths.h"

namespace jaxprof {
namespace {

TEST(Perfetto, MicrosecondsAreExactDecimals) {
  EXPECT_EQ(ps_to_us_exact(0), "0");
  EXPECT_EQ(ps_to_us_exact(1), "0.000001");
  EXPECT_EQ(ps_to_us_exact(1234567), "1.234567");
  EXPECT_EQ(ps_to_us_exact(5000000), "5");
  EXPECT_EQ(ps_to_us_exact(30723402000), "30723.402");
  EXPECT_EQ(ps_to_us_exact(-1500000), "-1.5");
  EXPECT_EQ(ps_to_us_exact(INT64_MIN), "-9223372036854.775808");
  EXPECT_EQ(ps_to_us_exact(INT64_MAX), "9223372036854.775807");
}

TEST(Perfetto, JsonStringsAreSafeInHtml) {
  EXPECT_EQ(json_string_html_safe("</script>\"&'"), "\"\\u003c/script\\u003e\\\"\\u0026'\"");
  EXPECT_EQ(json_string_html_safe("a\\b\n"), "\"a\\\\b\\n\"");
}

class Captures : public ::testing::TestWithParam<const char*> {};

TEST_P(Captures, SegmentsTileTheSpanWithTheTimelineNumbers) {
  LoadedProfile lp;
  load_profile({testing::test_data(GetParam())}, {}, lp);
  TimelineResult t = compute_timeline(lp.profile, testing::kAllWork);
  std::vector<DeviceSegments> s = timeline_segments(lp.profile, testing::kAllWork);
  ASSERT_EQ(s.size(), t.devices.size());
  for (size_t i = 0; i < s.size(); ++i) {
    const DeviceTimeline& d = t.devices[i];
    EXPECT_EQ(s[i].device, d.device);
    int64_t sum[6] = {};
    int64_t at = s[i].segments.front().interval.begin;
    for (const Segment& g : s[i].segments) {
      EXPECT_EQ(g.interval.begin, at);  // contiguous and disjoint
      at = g.interval.end;
      sum[static_cast<int>(g.kind)] += g.interval.length();
    }
    EXPECT_EQ(at - s[i].segments.front().interval.begin, d.span_ps);
    EXPECT_EQ(sum[0], d.compute_ps);
    EXPECT_EQ(sum[1], d.comm_exposed_ps);
    EXPECT_EQ(sum[2], d.memcpy_exposed_ps);
    EXPECT_EQ(sum[3], d.idle_in_modules_ps);
    EXPECT_EQ(sum[4], d.idle_between_modules_ps);
  }
}

TEST_P(Captures, EveryOpEventIsExported) {
  LoadedProfile lp;
  load_profile({testing::test_data(GetParam())}, {}, lp);
  std::string text;
  PerfettoSummary s = write_perfetto(lp.profile, [&](std::string_view p) { text += p; });
  OpsResult ops = compute_ops(lp.profile, {.steady = testing::kAllWork});
  uint64_t events = 0;
  for (const DeviceOps& d : ops.devices) events += d.events;
  EXPECT_EQ(s.devices, ops.devices.size());
  EXPECT_EQ(s.op_events, events);
  EXPECT_EQ(text.substr(0, 2), "{\"");
  EXPECT_EQ(text.substr(text.size() - 3), "]}\n");
}

INSTANTIATE_TEST_SUITE_P(Perfetto, Captures, ::testing::Values("jax_cpu_matmul", "jax_cpu_8dev"));

TEST(Perfetto, CollectiveBandwidthOnTheEightDeviceCapture) {
  LoadedProfile lp;
  load_profile({testing::test_data("jax_cpu_8dev")}, {}, lp);
  PerfettoSummary s = write_perfetto(lp.profile, [](std::string_view) {});
  EXPECT_EQ(s.collective_events, 64u);  // all-reduce.5 and psum_invariant.7 on 8 devices x 4
  // Every collective has its bandwidth: the one note is of what no trace can show (plane stats).
  ASSERT_EQ(s.notes.size(), 1u);
  EXPECT_NE(s.notes[0].find("plane stats"), std::string::npos) << s.notes[0];
}

// Counter values are written as integers when they are whole (memory in use: the bytes as
// before), else as the shortest decimal that reads back to the same double; the track is named
// as viewers name a Chrome trace's counter, by its event and its arg.
TEST(Perfetto, CountersWholeOrNot) {
  EXPECT_EQ(whole_number(3.0), 3);
  EXPECT_EQ(whole_number(-0x1p62), -(int64_t{1} << 62));
  EXPECT_EQ(whole_number(0.5), std::nullopt);
  EXPECT_EQ(whole_number(0x1p63), std::nullopt);
  std::string out;
  {
    const std::function<void(std::string_view)> write = [&](std::string_view s) { out += s; };
    JsonTraceSink sink(write);
    sink.begin(0);
    sink.counter_track(1, 7, "HBM bandwidth", "Scaled Value");
    sink.counter(1, 7, 1000000, 37.25);
    sink.counter(1, 7, 2000000, 40);
    sink.end({});
  }
  EXPECT_NE(out.find("\"name\": \"HBM bandwidth Scaled Value\""), std::string::npos) << out;
  EXPECT_NE(out.find("\"args\": {\"Scaled Value\": 37.25}"), std::string::npos) << out;
  EXPECT_NE(out.find("\"args\": {\"Scaled Value\": 40}"), std::string::npos) << out;
}

}  // namespace
}  // namespace jaxprof
