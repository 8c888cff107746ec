// Inputs built to break the readers, and the promises the model keeps against them: no event names
// a plane, line or metadata entry that does not exist; no time read from a file overflows on its
// way into picoseconds; no float becomes an integer it does not fit. Each case here was found by
// fuzzing (fuzz/) or is one of the hostile sizes a reader must refuse quickly and in little memory.
#include "hostile_input.h"

#include <gtest/gtest.h>

#include <limits>

#include "archive_builder.h"
#include "jaxprof/analysis/compile/compile.h"
#include "jaxprof/analysis/summary/summary.h"
#include "jaxprof/formats/chrome_trace/chrome_trace.h"
#include "jaxprof/io/parquet.h"
#include "jaxprof/io/zip.h"
#include "jaxprof/model/invariants.h"
#include "jaxprof/model/time_range.h"

namespace jaxprof {
namespace {

using testing::expect_refused;
using testing::TestEvent;
using testing::TestLine;
using testing::TraceRow;
using testing::try_load;
using testing::write_temp_file;

// ---- the model's promises ----

TEST(HostileInput, ChromeTraceWithoutTimelinesIsRefusedNotCrashed) {
  // Both once made `summary` and `compile` read plane 0 of a profile with no planes.
  expect_refused(write_temp_file("x.trace.json", R"([{"name":"x"}])"), {"no events to analyse"});
  expect_refused(write_temp_file("nots.trace.json", R"([{"ph":"X","name":"x"}])"),
                 {"no events to analyse", "without a timestamp"});
  expect_refused(write_temp_file("a.trace.json", R"({"traceEvents":[{"name":"a","ts":0}]})"),
                 {"no events to analyse"});
  expect_refused(write_temp_file("empty.trace.json", R"({"traceEvents":[]})"),
                 {"no events to analyse"});
}

TEST(HostileInput, ChromeTraceWithOneEventRunsEveryAnalysis) {
  LoadedProfile lp;
  load_profile({write_temp_file("one.trace.json", R"([{"ph":"X","ts":0,"dur":1,"name":"x"}])")}, {},
               lp);
  EXPECT_NO_THROW(compute_summary(lp.profile));
  EXPECT_NO_THROW(compute_compile(lp.profile));
}

// A one-plane, one-line profile as an importer would hand it over, to break by hand.
Profile small_profile() {
  Profile p;
  p.buffers.push_back(Buffer::from_bytes({1}, "hand.xplane.pb"));
  p.hosts.push_back(Host{"host", "hand.xplane.pb", 0});
  p.sources.push_back(nullptr);
  Plane& plane = p.planes.emplace_back();
  plane.lines.push_back(0);
  Line& line = p.lines.emplace_back();
  line.first_event = 0;
  line.event_count = 1;
  EventMetadata& m = p.event_metadata.emplace_back();
  m.plane = 0;
  p.events.resize(1);
  p.events.metadata[0] = 1;
  p.events.duration_ps[0] = 5;
  return p;
}

std::string structure_error(const Profile& p) {
  try {
    check_profile_structure(p);
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), "hand.xplane.pb");
    return e.reason();
  }
  return "";
}

std::string events_error(const Profile& p) {
  try {
    uint32_t line = 0;
    check_line_events(p, {&line, 1});
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), "hand.xplane.pb");
    return e.reason();
  }
  return "";
}

TEST(HostileInput, BrokenStructureIsAnInputError) {
  EXPECT_EQ(structure_error(small_profile()), "");
  EXPECT_EQ(events_error(small_profile()), "");
  Profile p = small_profile();
  p.event_metadata[1].plane = 3;
  EXPECT_NE(structure_error(p).find("names plane 3"), std::string::npos);
  p = small_profile();
  p.lines[0].plane = 2;
  EXPECT_NE(structure_error(p).find("line 0"), std::string::npos);
  p = small_profile();
  p.lines[0].event_count = 2;
  EXPECT_NE(structure_error(p).find("events 0 to 2 of 1"), std::string::npos);
  p = small_profile();
  p.planes[0].lines.push_back(7);
  EXPECT_NE(structure_error(p).find("line 7"), std::string::npos);
  p = small_profile();
  p.hosts.push_back(Host{"far", "far.xplane.pb", std::numeric_limits<int64_t>::max()});
  p.base_ns = 0;
  try {
    check_profile_structure(p);
    ADD_FAILURE() << "hosts 292 years apart accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), "far.xplane.pb");
  }
}

TEST(HostileInput, EventsNamingWhatDoesNotExistAreAnInputError) {
  Profile p = small_profile();
  p.events.metadata[0] = 9;
  EXPECT_NE(events_error(p).find("event metadata 9"), std::string::npos);
  p = small_profile();
  p.planes.emplace_back();
  p.event_metadata[1].plane = 1;  // metadata of another plane
  EXPECT_NE(events_error(p).find("event metadata 1"), std::string::npos);
  p = small_profile();
  p.events.duration_ps[0] = -1;
  EXPECT_NE(events_error(p).find("lasts -1 ps"), std::string::npos);
  p = small_profile();
  p.events.start_ps[0] = kMaxTimePs + 1;
  EXPECT_NE(events_error(p).find("starts"), std::string::npos);
}

TEST(HostileInput, DeviceClockTimesOutOfRangeAreAnInputError) {
  Profile p = small_profile();
  p.lines[0].device_clock = true;
  p.events.device_start_ps[0] = p.events.device_duration_ps[0] = Events::kNoStat;
  EXPECT_EQ(events_error(p), "");  // an event without device clock stats keeps the timeline's
  p.events.device_start_ps[0] = 7;
  p.events.device_duration_ps[0] = kMaxTimePs;
  EXPECT_EQ(events_error(p), "");
  // A duration that would overflow an end on the device's clock.
  p.events.device_duration_ps[0] = std::numeric_limits<int64_t>::max() - 3;
  EXPECT_NE(events_error(p).find("device_duration_ps"), std::string::npos);
  p.events.device_duration_ps[0] = 5;
  p.events.device_start_ps[0] = kMaxTimePs + 1;
  EXPECT_NE(events_error(p).find("device_offset_ps"), std::string::npos);
}

// What On Demand skips by counting brackets is checked too: elements that are not events must be
// separated by commas, and an event must end where its brackets balance.
TEST(HostileInput, ChromeTraceMalformedElementsAreInvalidInEveryWindowSize) {
  const std::string traces[] = {
      R"({"traceEvents":["a", "args": {"n": 7}}, {"ph":"X","ts":1,"dur":1,"name":"a"}, )"
      R"({"ph":"X","ts":2,"dur":1,"name":"b"}, {"ph":"X","ts":3,"dur":1,"name":"c"}]})",
      R"({"traceEvents":[{"ph":"X","ts":1,"dur":1,"name":"a"}, {"ph":"M","name":"thread_name",)"
      R"("args{": "name": "x"}}, {"ph":"X","ts":2,"dur":1,"name":"b"}, )"
      R"({"ph":"X","ts":3,"dur":1,"name":"c"}]})"};
  for (const std::string& trace : traces)
    for (size_t window : {size_t{16}, size_t{64}, size_t{100}, size_t{1} << 30}) {
      Profile p;
      ChromeTraceOptions options;
      options.window_bytes = window;
      try {
        import_chrome_trace(p, Buffer::from_bytes({trace.begin(), trace.end()}, "bad.json"), "h",
                            options);
        ADD_FAILURE() << "accepted with windows of " << window << " bytes: " << trace;
      } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("invalid JSON"), std::string::npos) << e.what();
      }
    }
}

TEST(HostileInput, ChromeTraceStrayBraceIsInvalidInEveryWindowSize) {
  // simdjson ended its iteration quietly at the stray '}': windows of a few hundred bytes (how
  // large traces are read) took the rest of the window for read and dropped its events.
  std::string trace =
      R"({"traceEvents":[{"ph":"X","ts":1,"dur":1,"name":"a"},"name": "M", "ts": 5, )"
      R"("args": {"n": 7}}, {"ph":"X","ts":2,"dur":1,"name":"b"}]})";
  for (size_t window : {size_t{64}, size_t{100}, size_t{1} << 30}) {
    Profile p;
    ChromeTraceOptions options;
    options.window_bytes = window;
    try {
      import_chrome_trace(p, Buffer::from_bytes({trace.begin(), trace.end()}, "stray.json"), "h",
                          options);
      ADD_FAILURE() << "accepted with windows of " << window << " bytes";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("invalid JSON"), std::string::npos) << e.what();
    }
  }
}

// ---- checked time arithmetic ----

TEST(HostileInput, TimeHelpersRefuseOverflow) {
  int64_t out;
  EXPECT_TRUE(ns_to_ps(kMaxTimePs / 1000, out));
  EXPECT_FALSE(ns_to_ps(kMaxTimePs / 1000 + 1, out));
  EXPECT_FALSE(ns_to_ps(std::numeric_limits<int64_t>::max(), out));
  EXPECT_FALSE(ps_since(std::numeric_limits<int64_t>::max(), -1, out));
  EXPECT_TRUE(ps_since(1'700'000'000'000'000'000, 1'700'000'000'000'000'000 - 5, out));
  EXPECT_EQ(out, 5000);
  EXPECT_TRUE(double_to_int64(-9223372036854775808.0, out));
  EXPECT_EQ(out, std::numeric_limits<int64_t>::min());
  EXPECT_FALSE(double_to_int64(9223372036854775808.0, out));
  EXPECT_FALSE(double_to_int64(3.8e158, out));
  EXPECT_FALSE(double_to_int64(std::numeric_limits<double>::quiet_NaN(), out));
  EXPECT_FALSE(double_to_int64(-std::numeric_limits<double>::infinity(), out));
  EXPECT_TRUE(double_to_int64(-2.9, out));
  EXPECT_EQ(out, -2);
}

std::string nsys_archive(const std::vector<TraceRow>& rows) {
  return testing::make_zip(
      {{"nvtx_gpu_proj_trace/trace.parquet", testing::nsys_trace_parquet(rows)}});
}

TEST(HostileInput, NsysJaxRangesLoad) {
  // The builder's archive is read as meant: one module execution with one thunk.
  std::string path = write_temp_file(
      "nsys_ok.zip",
      nsys_archive({{"TSL:XlaModule:#hlo_module=jit_f,program_id=1#", 1000, 500, 1, {}},
                    {"TSL:Thunk:#hlo_op=fusion.1#", 1100, 200, 2, 1}}));
  LoadedProfile lp;
  load_profile({path}, {}, lp);
  lp.profile.require_all_lines();
  ASSERT_EQ(lp.profile.events.size(), 2u);
  EXPECT_EQ(lp.profile.events.duration_ps[0], 500'000);
}

TEST(HostileInput, NsysJaxTimestampBeyondRangeIsRefused) {
  // Once overflowed `start_ns * 1000`: every command exited 0 with a span of 864,691 s.
  std::string path = write_temp_file(
      "nsys_far.zip",
      nsys_archive({{"TSL:XlaModule:#hlo_module=jit_f,program_id=1#", 1000, 500, 1, {}},
                    {"TSL:Thunk:#hlo_op=fusion.1#", 1100, 200, 2, 1},
                    {"TSL:XlaModule:#hlo_module=jit_f,program_id=1#", 36028823892808452, 10, 3, {}},
                    {"TSL:Thunk:#hlo_op=fusion.1#", 36028823892808452, 5, 4, 3}}));
  expect_refused(path, {"!nvtx_gpu_proj_trace/trace.parquet", "out of range", "36028823892808452"});
}

TEST(HostileInput, NsysJaxDoubleBeyondInt64IsRefused) {
  // Once cast to int64 unchecked (undefined behaviour): `ops` exited 0 with a 26.9 s span.
  for (double bad : {3.8e158, -1e300, std::numeric_limits<double>::quiet_NaN(),
                     std::numeric_limits<double>::infinity()}) {
    std::string path = write_temp_file(
        "nsys_double.zip",
        nsys_archive({{"TSL:XlaModule:#hlo_module=jit_f,program_id=1#", 1000, 500, bad, {}},
                      {"TSL:Thunk:#hlo_op=fusion.1#", 1100, 200, 2, 1}}));
    expect_refused(path, {"!nvtx_gpu_proj_trace/trace.parquet", "column 'RangeId' row 0",
                          "no 64-bit integer"});
  }
}

TEST(HostileInput, NsysJaxEndBeforeStartOverflowIsRefused) {
  std::string path = write_temp_file(
      "nsys_long.zip", nsys_archive({{"TSL:XlaModule:#hlo_module=jit_f,program_id=1#",
                                      0,
                                      std::numeric_limits<int64_t>::max(),
                                      1,
                                      {}},
                                     {"TSL:Thunk:#hlo_op=fusion.1#", 1100, 200, 2, 1}}));
  expect_refused(path, {"out of range"});
}

TEST(HostileInput, XSpaceTimesBeyondRangeAreRefused) {
  auto refused = [](const std::string& name, const std::vector<TestLine>& lines,
                    const std::string& fragment) {
    expect_refused(write_temp_file(name, testing::test_xspace(lines)), {"out of range", fragment});
  };
  EXPECT_TRUE(
      try_load({write_temp_file("ok.xplane.pb", testing::test_xspace({{100, {{5, 7}}}}))}).error ==
      std::nullopt);
  refused("offset.xplane.pb", {{100, {{kMaxTimePs + 1, 7}}}}, "offset_ps");
  refused("negative_offset.xplane.pb", {{100, {{std::numeric_limits<int64_t>::min(), 7}}}},
          "offset_ps");
  refused("duration.xplane.pb", {{100, {{5, kMaxTimePs + 1}}}}, "duration_ps");
  refused("negative.xplane.pb", {{100, {{5, -3}}}}, "negative duration");
  refused("lines_apart.xplane.pb", {{0, {{5, 7}}}, {std::numeric_limits<int64_t>::max(), {{5, 7}}}},
          "timestamp_ns");
  // An offset and a line start each within range, together beyond it.
  refused("sum.xplane.pb", {{0, {{5, 7}}}, {kMaxTimePs / 1000, {{kMaxTimePs / 2, 7}}}},
          "offset_ps");
}

TEST(HostileInput, XSpaceEventWithUndeclaredMetadataIsTheStandIn) {
  LoadedProfile lp;
  load_profile({write_temp_file("undeclared.xplane.pb",
                                testing::test_xspace({{100, {{5, 7, 1}, {9, 1, 4242}}}}))},
               {}, lp);
  lp.profile.require_all_lines();
  ASSERT_EQ(lp.profile.events.size(), 2u);
  EXPECT_EQ(lp.profile.event_name(1), "(unknown event)");
}

TEST(HostileInput, RepeatedEventFieldsCountOnceInEveryReader) {
  using testing::int_field;
  using testing::len_field;
  // An event naming metadata 1, then 2 (and two offsets): the scan (what analyses of undecoded
  // lines see) and the decode once disagreed, the first taking 1 and the second 2.
  std::string event =
      int_field(1, 1) + int_field(2, 5) + int_field(3, 7) + int_field(1, 2) + int_field(2, 900);
  std::string plane = int_field(1, 1) + len_field(2, "/device:GPU:0") +
                      len_field(3, int_field(1, 1) + int_field(3, 100) + len_field(4, event));
  for (int id : {1, 2})
    plane +=
        len_field(4, int_field(1, id) +
                         len_field(2, int_field(1, id) + len_field(2, "op" + std::to_string(id))));
  LoadedProfile lp;
  load_profile({write_temp_file("repeated.xplane.pb", len_field(1, plane))}, {}, lp);
  const Profile& p = lp.profile;
  std::vector<uint8_t> all(p.event_metadata.size(), 1);
  std::vector<ScannedEvent> scanned;
  p.scan_line(0, all, scanned);
  ASSERT_EQ(scanned.size(), 1u);
  p.require_all_lines();
  EXPECT_EQ(scanned[0].metadata, p.events.metadata[0]);
  EXPECT_EQ(scanned[0].start_ps, p.events.start_ps[0]);
  EXPECT_EQ(p.event_name(0), "op1");
  EXPECT_EQ(p.events.start_ps[0], 5);
}

TEST(HostileInput, DamagedStatIsAnErrorNamingTheFile) {
  using testing::int_field;
  using testing::len_field;
  // The stat's second field has wire type 7: read only when an analysis asks for the stats.
  std::string event = int_field(1, 1) + int_field(3, 7) + len_field(4, int_field(1, 9) + "\x0f");
  std::string plane = int_field(1, 1) + len_field(2, "/device:GPU:0") +
                      len_field(3, int_field(1, 1) + len_field(4, event)) +
                      len_field(4, int_field(1, 1) + len_field(2, len_field(2, "op")));
  std::string path = write_temp_file("bad_stat.xplane.pb", len_field(1, plane));
  LoadedProfile lp;
  load_profile({path}, {}, lp);
  lp.profile.require_all_lines();
  try {
    lp.profile.event_stats(0, 0);
    ADD_FAILURE() << "a damaged stat read";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), path);
  }
}

TEST(HostileInput, ChromeTraceTimesBeyondRangeAreRefused) {
  auto trace = [](const std::string& events) { return R"({"traceEvents":[)" + events + "]}"; };
  expect_refused(
      write_temp_file("far.trace.json", trace(R"({"ph":"X","ts":0,"dur":1,"name":"a"},)"
                                              R"({"ph":"X","ts":9.2e12,"dur":1,"name":"b"})")),
      {"out of range", "\"ts\""});
  expect_refused(
      write_temp_file("long.trace.json", trace(R"({"ph":"X","ts":0,"dur":3e12,"name":"a"})")),
      {"out of range", "\"dur\""});
  expect_refused(
      write_temp_file("early.trace.json",
                      trace(R"({"ph":"X","ts":-9223372036854.775807,"dur":1,"name":"a"})")),
      {"out of range", "\"ts\""});
  expect_refused(write_temp_file("pair.trace.json", trace(R"({"ph":"B","ts":-9.2e12,"name":"a"},)"
                                                          R"({"ph":"E","ts":9.2e12})")),
                 {"out of range", "B/E"});
}

// ---- hostile sizes: refused within seconds (memory: tests/python/cli/test_hostile_sizes.py) ----

TEST(HostileSizes, XSpaceDeclaringTenGigabyteString) {
  std::string plane = testing::varint(2 << 3 | 2) + testing::varint(uint64_t{10} << 30) + "xx";
  std::string path = write_temp_file("ten_gb.xplane.pb", testing::len_field(1, plane));
  auto r = try_load({path});
  ASSERT_TRUE(r.error.has_value());
  EXPECT_NE(std::string(r.error->what()).find("longer than"), std::string::npos) << r.error->what();
  EXPECT_LT(r.seconds, 2.0);
}

TEST(HostileSizes, ParquetDeclaringTwoBillionValues) {
  // A chunk of 2^31 values, and a page of 2^31 - 1 nulls in one 6-byte RLE run.
  std::string levels = testing::with_length(testing::rle_run(0x7fffffff, 0));
  testing::TestColumn c{"x",
                        2,
                        1,
                        false,
                        int64_t{1} << 31,
                        testing::page_header(0, static_cast<int32_t>(levels.size()),
                                             static_cast<int32_t>(levels.size()), 0x7fffffff, 0) +
                            levels};
  std::string file = testing::make_parquet({c}, int64_t{1} << 31);
  auto t0 = std::chrono::steady_clock::now();
  try {
    ParquetFile(file, "big.parquet").read(0);
    ADD_FAILURE() << "2^31 values read";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("more values than the reader allows"), std::string::npos)
        << e.what();
  }
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 2.0);
}

TEST(HostileSizes, ParquetPageClaimingGigabytes) {
  // The page header's sizes are 32-bit: "4 GB" arrives as a negative size, or as 2^31 - 1 bytes
  // that a few bytes of Snappy claim to expand to.
  for (int32_t claimed :
       {std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max()}) {
    std::string body = testing::varint(static_cast<uint32_t>(claimed)) + "\x00\x00";
    testing::TestColumn c{
        "x",   2, 0,
        false, 1, testing::page_header(0, claimed, static_cast<int32_t>(body.size()), 1, 0) + body};
    std::string file = testing::make_parquet({c}, 1, /*codec=*/1);
    auto t0 = std::chrono::steady_clock::now();
    try {
      ParquetFile(file, "page.parquet").read(0);
      ADD_FAILURE() << "a page of " << claimed << " bytes read";
    } catch (const InputError& e) {
      std::string what = e.what();
      EXPECT_TRUE(what.find("out of bounds") != std::string::npos ||
                  what.find("more than Snappy can expand to") != std::string::npos)
          << what;
    }
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 2.0);
  }
}

TEST(HostileSizes, ZipMemberWithTenThousandfoldRatio) {
  // 10 KB of deflate declaring 100 MB: refused from the directory, before inflating.
  std::string z =
      testing::make_zip({{"nvtx_gpu_proj_trace/trace.parquet", std::string(10240, 'x')}});
  size_t cd = z.find("PK\x01\x02");
  ASSERT_NE(cd, std::string::npos);
  z[cd + 10] = 8;  // deflated
  uint32_t size = 10240u * 10000u;
  for (int i = 0; i < 4; ++i) z[cd + 24 + i] = static_cast<char>(size >> (8 * i));
  auto r = try_load({write_temp_file("bomb.zip", z)});
  ASSERT_TRUE(r.error.has_value());
  EXPECT_NE(std::string(r.error->what()).find("decompression bomb"), std::string::npos)
      << r.error->what();
  EXPECT_LT(r.seconds, 2.0);
}

TEST(HostileSizes, JsonNestedHundredThousandDeep) {
  // Valid JSON: nested in an argument nothing reads, it is skipped without recursion; as the
  // events themselves, it is no event at all.
  const std::string open(100000, '['), close(100000, ']');
  std::string in_args =
      R"({"traceEvents":[{"ph":"X","ts":1,"name":"a","args":{"x":)" + open + close + "}}]}";
  auto t0 = std::chrono::steady_clock::now();
  LoadedProfile lp;
  load_profile({write_temp_file("deep_args.trace.json", in_args)}, {}, lp);
  lp.profile.require_all_lines();
  ASSERT_EQ(lp.profile.events.size(), 1u);
  EXPECT_NO_THROW(lp.profile.event_stats(0, 0));
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 2.0);
  auto r =
      try_load({write_temp_file("deep.trace.json", R"({"traceEvents":)" + open + close + "}")});
  ASSERT_TRUE(r.error.has_value());
  EXPECT_NE(std::string(r.error->what()).find("no events to analyse"), std::string::npos)
      << r.error->what();
  EXPECT_LT(r.seconds, 2.0);
}

}  // namespace
}  // namespace jaxprof
