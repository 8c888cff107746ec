// The Chrome trace importer: exact time conversion, the project's own captures (numbers from an
// independent Python json parse of the same files, and the xplane of the same run), windowed
// parsing at every window size, the event phases, and bad input.
#include "jaxprof/formats/chrome_trace/chrome_trace.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <optional>

#include "jaxprof/analysis/ops/ops.h"
#include "jaxprof/common/error.h"
#include "jaxprof/formats/load.h"
#include "test_paths.h"

namespace jaxprof {
namespace {

using testing::test_data;

int64_t ps(std::string_view text) {
  int64_t out = -7;
  EXPECT_TRUE(micros_text_to_ps(text, out)) << text;
  return out;
}

TEST(MicrosTextToPs, ConvertsTheDecimalTextExactly) {
  EXPECT_EQ(ps("1234.567"), 1234567000);
  EXPECT_EQ(ps("0"), 0);
  EXPECT_EQ(ps("12"), 12000000);
  EXPECT_EQ(ps("-3.5"), -3500000);
  EXPECT_EQ(ps("0.000001"), 1);
  EXPECT_EQ(ps("1e-06"), 1);
  EXPECT_EQ(ps("1E+3"), 1000000000);
  // XLA writes %.17g doubles: the nearest picosecond is the intended value.
  EXPECT_EQ(ps("9.9999999999999995e-07"), 1);
  EXPECT_EQ(ps("68388.653999999995"), 68388654000);
  EXPECT_EQ(ps("0.0025000000000000001"), 2500);
  // Ties go to even; anything beyond the tie rounds up.
  EXPECT_EQ(ps("0.0000005"), 0);
  EXPECT_EQ(ps("0.0000015"), 2);
  EXPECT_EQ(ps("0.00000050000000000000000001"), 1);
  // More digits than 64 bits hold.
  EXPECT_EQ(ps("1234567.8901234567890123456789"), 1234567890123);
  EXPECT_EQ(ps("9223372.036854775807"), 9223372036855);
  EXPECT_EQ(ps("9223372036854.775807"), 9223372036854775807);
  EXPECT_EQ(ps("1e-30"), 0);
}

TEST(MicrosTextToPs, RejectsWhatIsNotANumberOrOutOfRange) {
  int64_t out = 0;
  for (std::string_view bad : {"", "-", "1.", ".5", "1e", "1e+", "abc", "1.2.3", "0x10", "1 ",
                               "\"1\"", "1e30", "99999999999999999999"})
    EXPECT_FALSE(micros_text_to_ps(bad, out)) << bad;
}

std::string write_temp(const std::string& name, const std::string& text) {
  std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

Profile import_text(const std::string& text, size_t window = 1 << 20) {
  Profile p;
  ChromeTraceOptions o;
  o.window_bytes = window;
  import_chrome_trace(p, Buffer::from_bytes({text.begin(), text.end()}, "t.json"), "h", o);
  finish_import(p);
  p.require_all_lines();
  return p;
}

struct Summary {
  uint64_t events = 0;
  int64_t duration_ps = 0;
  std::map<std::string, uint64_t> per_line;
  bool operator==(const Summary&) const = default;
};

Summary summarize(const Profile& p) {
  Summary s;
  for (const Line& line : p.lines) {
    s.events += line.event_count;
    s.per_line[std::string(p.str(line.name))] += line.event_count;
    for (uint32_t e = line.first_event; e < line.first_event + line.event_count; ++e)
      s.duration_ps += p.events.duration_ps[e];
  }
  return s;
}

LoadedProfile load(const std::string& path) {
  LoadedProfile out;
  load_profile({path}, {}, out);
  out.profile.require_all_lines();
  return out;
}

const char* kMatmulTrace = "jax_cpu_matmul/plugins/profile/session/vm.trace.json.gz";
const char* k8devTrace = "jax_cpu_8dev/plugins/profile/session/vm.trace.json.gz";

// Expected values: Python's json module over the same files, durations as Decimal rounded to
// the nearest picosecond.
TEST(ChromeTraceImport, MatmulCaptureMatchesAnIndependentParse) {
  LoadedProfile lp = load(test_data(kMatmulTrace));
  const Profile& p = lp.profile;
  ASSERT_EQ(p.planes.size(), 1u);
  EXPECT_EQ(p.str(p.planes[0].name), "/host:CPU");
  EXPECT_EQ(p.planes[0].kind, PlaneKind::kHostCpu);
  Summary s = summarize(p);
  EXPECT_EQ(s.events, 631u);
  EXPECT_EQ(s.duration_ps, 83208308353);
  EXPECT_EQ(s.per_line.size(), 11u);
  EXPECT_EQ(s.per_line["python3"], 237u);
  EXPECT_EQ(s.per_line["tf_XLAPjRtCpuClient/960585590912332371"], 86u);
  EXPECT_TRUE(p.warnings.empty());
}

TEST(ChromeTraceImport, EightDeviceCaptureMatchesAnIndependentParse) {
  LoadedProfile lp = load(test_data(k8devTrace));
  Summary s = summarize(lp.profile);
  EXPECT_EQ(s.events, 23898u);
  EXPECT_EQ(s.duration_ps, 1737641117401);
  EXPECT_EQ(s.per_line.size(), 12u);
  EXPECT_EQ(s.per_line["python3"], 20581u);
}

// The xplane of the same run: same op events, same per-op totals (the CPU backend's times are
// whole nanoseconds, which the trace's %.17g microseconds carry exactly).
TEST(ChromeTraceImport, OpsEqualTheXplaneOfTheSameRun) {
  for (const char* run : {"jax_cpu_matmul", "jax_cpu_8dev"}) {
    std::string dir = test_data(std::string(run) + "/plugins/profile/session/");
    LoadedProfile trace = load(dir + "vm.trace.json.gz");
    LoadedProfile xplane = load(dir + "vm.xplane.pb");
    OpsOptions o;
    OpsResult a = compute_ops(trace.profile, o), b = compute_ops(xplane.profile, o);
    ASSERT_EQ(a.devices.size(), b.devices.size()) << run;
    for (size_t d = 0; d < a.devices.size(); ++d) {
      EXPECT_EQ(a.devices[d].device, b.devices[d].device);
      std::map<std::pair<std::string, std::string>, std::tuple<uint64_t, int64_t, int64_t>> ga, gb;
      for (const OpGroup& g : a.devices[d].groups)
        ga[{g.module, g.name}] = {g.count, g.total_ps, g.self_ps};
      for (const OpGroup& g : b.devices[d].groups)
        gb[{g.module, g.name}] = {g.count, g.total_ps, g.self_ps};
      EXPECT_EQ(ga, gb) << run << " " << a.devices[d].device;
    }
  }
}

TEST(ChromeTraceImport, HloColumnsAndStatsComeFromArgs) {
  LoadedProfile lp = load(test_data(kMatmulTrace));
  const Profile& p = lp.profile;
  uint64_t ops = 0;
  for (uint32_t e = 0; e < p.events.size(); ++e) {
    if (p.events.hlo_op[e] == 0) continue;
    ++ops;
    EXPECT_EQ(p.str(p.events.hlo_op[e]), p.event_name(e));
    EXPECT_EQ(p.module_label(p.events.module[e]), "jit_two_matmuls");
    auto ordinal = p.event_stat(0, e, "device_ordinal");
    ASSERT_TRUE(ordinal.has_value());
    EXPECT_EQ(ordinal->as_int(), 0);
    auto src = p.event_stat(0, e, "_src");
    ASSERT_TRUE(src.has_value());
    EXPECT_EQ(src->str, "external/xla/xla/backends/cpu/runtime/thunk_executor.cc");
  }
  EXPECT_EQ(ops, 20u);
}

TEST(ChromeTraceImport, EveryWindowSizeGivesTheSameProfile) {
  std::ifstream in(test_data(kMatmulTrace), std::ios::binary);
  std::string gz((std::istreambuf_iterator<char>(in)), {});
  auto bytes = gunzip(gz, "x", size_t{1} << 30);
  std::string text(bytes.begin(), bytes.end());
  Summary want = summarize(import_text(text));
  for (size_t window : {64, 100, 333, 1000, 4096, 65536}) {
    Profile p = import_text(text, window);
    EXPECT_EQ(summarize(p), want) << window;
  }
}

TEST(ChromeTraceImport, PhasesMetadataAndArrayFormat) {
  // Array format, unterminated (allowed), Perfetto-style spacing, B/E nesting, instant events,
  // counters ignored, a string pid, escaped names, nested args kept as JSON text.
  std::string text = R"json([
    {"ph": "M", "pid": 1, "name": "process_name", "args": {"name": "/device:GPU:0"}},
    {"ph": "M", "pid": 1, "tid": 7, "name": "thread_name", "args": {"name": "Stream #7(Kernel)"}},
    {"ph": "B", "pid": 1, "tid": 7, "ts": 10, "name": "outer"},
    {"ph": "B", "pid": 1, "tid": 7, "ts": 11.5, "name": "in\"ner", "args": {"hlo_op": "fusion.1", "hlo_module": "jit_f", "program_id": 5, "k": {"a": [1, 2]}}},
    {"ph": "E", "pid": 1, "tid": 7, "ts": 12},
    {"ph": "E", "pid": 1, "tid": 7, "ts": 20},
    {"ph": "i", "pid": 1, "tid": 7, "ts": 15, "name": "mark", "s": "t"},
    {"ph": "C", "pid": 1, "ts": 15, "name": "mem", "args": {"v": 3}},
    {"ph": "X", "pid": "host", "tid": 1, "ts": 9.000001, "dur": 0.5, "name": "h"},
  )json";
  Profile p = import_text(text);
  ASSERT_EQ(p.planes.size(), 2u);
  EXPECT_EQ(p.str(p.planes[0].name), "/device:GPU:0");
  EXPECT_EQ(p.planes[0].kind, PlaneKind::kGpu);
  EXPECT_EQ(p.str(p.planes[1].name), "pid host");
  const Line& stream = p.lines[p.planes[0].lines[0]];
  EXPECT_EQ(p.str(stream.name), "Stream #7(Kernel)");
  ASSERT_EQ(stream.event_count, 3u);
  uint32_t e = stream.first_event;
  // Time zero is the earliest event (9.000001 us, floored to the nanosecond).
  EXPECT_EQ(p.event_name(e), "outer");
  EXPECT_EQ(p.events.start_ps[e], 1000000);
  EXPECT_EQ(p.events.duration_ps[e], 10000000);
  EXPECT_EQ(p.event_name(e + 1), "in\"ner");
  EXPECT_EQ(p.events.duration_ps[e + 1], 500000);
  EXPECT_EQ(p.str(p.events.hlo_op[e + 1]), "fusion.1");
  EXPECT_EQ(p.module_label(p.events.module[e + 1]), "jit_f(5)");
  auto nested = p.event_stat(0, e + 1, "k");
  ASSERT_TRUE(nested.has_value());
  EXPECT_EQ(nested->str, R"({"a": [1, 2]})");
  auto program = p.event_stat(0, e + 1, "program_id");
  ASSERT_TRUE(program.has_value());
  EXPECT_EQ(program->as_int(), 5);
  EXPECT_EQ(p.event_name(e + 2), "mark");
  EXPECT_EQ(p.events.duration_ps[e + 2], 0);
  const Line& host = p.lines[p.planes[1].lines[0]];
  ASSERT_EQ(host.event_count, 1u);
  EXPECT_EQ(p.events.start_ps[host.first_event], 1);
  ASSERT_EQ(p.warnings.size(), 1u);
  EXPECT_NE(p.warnings[0].find("1 counter (C) events"), std::string::npos);
}

TEST(ChromeTraceImport, UnmatchedBeginAndEndAreCountedNotFatal) {
  Profile p = import_text(R"({"traceEvents":[{"ph":"E","pid":1,"tid":1,"ts":1},
      {"ph":"B","pid":1,"tid":1,"ts":2,"name":"a"}]})");
  EXPECT_EQ(p.events.size(), 0u);
  ASSERT_EQ(p.warnings.size(), 1u);
  EXPECT_NE(p.warnings[0].find("2 unmatched"), std::string::npos);
}

void expect_input_error(const std::string& text, const std::string& fragment, size_t window = 64) {
  SCOPED_TRACE(text.substr(0, 80));
  try {
    import_text(text, window);
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), "t.json");
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(ChromeTraceImport, BadInputIsAnInputErrorNamingTheFile) {
  std::string ev = R"({"ph":"X","pid":1,"tid":1,"ts":1,"dur":2,"name":"a"})";
  std::string many;
  for (int i = 0; i < 20; ++i) many += (i ? "," : "") + ev;
  expect_input_error("", "");
  expect_input_error("hello", "not a Chrome trace");
  expect_input_error(R"({"displayTimeUnit":"ns"})", "no \"traceEvents\"");
  expect_input_error(R"({"traceEvents":{}})", "not an array");
  expect_input_error(R"({"traceEvents":[)" + many, "truncated");
  expect_input_error(R"({"traceEvents":[)" + many + R"(,{"ph":"X","ts":)", "truncated");
  expect_input_error(R"({"traceEvents":[)" + many + "]", "truncated");
  expect_input_error(R"({"traceEvents":[)" + many + "]} x", "after the document");
  expect_input_error(R"({"traceEvents":[{"ph":"X","ts":"soon","name":"a"}]})", "\"ts\"");
  expect_input_error(R"({"traceEvents":[{"ph":"X","ts":1,"dur":-1,"name":"a"}]})", "negative");
  expect_input_error(R"({"traceEvents":[{"ph":7,"ts":1}]})", "wrong shape");
  expect_input_error(R"({"traceEvents":[)" + many + R"(,{"ph":"X" "ts":1}]})", "invalid JSON");
  expect_input_error(R"({"traceEvents":[{"ph":"X","ts":1,"name":"a\u00"}]})", "invalid JSON");
  expect_input_error(R"({"traceEvents":[)" + many + ",{\"name\":\"\xff\xfe\"}]}", "invalid JSON");
}

// Members the import does not read are skipped by On Demand without a look inside; a lost quote
// there shifts every later string and once swallowed the events after it (found by fuzzing).
TEST(ChromeTraceImport, BrokenMembersItDoesNotReadAreRefusedAtEveryWindowSize) {
  std::string ev = R"({"ph":"X","pid":1,"tid":1,"ts":1,"dur":2,"name":"a"})";
  std::string many;
  for (int i = 0; i < 20; ++i) many += (i ? "," : "") + ev;
  const std::string head = R"({"traceEvents":[)" + many + ",";
  for (size_t window : {size_t{64}, size_t{256}, size_t{1} << 20}) {
    SCOPED_TRACE(window);
    // A lost quote in an arg: the rest of the event reads as strings and atoms.
    expect_input_error(
        head + R"({"ph":"X","ts":1,"dur":1,"name":"b","args":{"x":"7,"y":"z"}},)" + ev + "]}",
        "JSON", window);
    expect_input_error(head + R"({"ph":"X","ts":1,"dur":1,"name":"b","cat":tru},)" + ev + "]}",
                       "\"cat\" is not a well-formed JSON value", window);
    expect_input_error(
        head + R"({"ph":"X","ts":1,"dur":1,"name":"b","cat":{"a":[1,}},)" + ev + "]}",
        "invalid JSON", window);
    expect_input_error(head + R"({"ph":"X","ts":1,"dur":1,"name":"b","pid":7false},)" + ev + "]}",
                       "\"pid\"", window);
    expect_input_error(head + R"({"ph":"M","ts":1x,"name":"process_name"},)" + ev + "]}",
                       "\"ts\" is not a well-formed JSON value", window);
    expect_input_error(head + R"({"ph":"X","ts":[1],"name":"b"}]})",
                       "\"ts\" has an unexpected type", window);
    // Well-formed members it does not read stay welcome.
    Profile p =
        import_text(head + R"({"ph":"X","ts":1,"dur":1,"name":"b","cat":{"a":[1,{"b":null}],)"
                           R"("c":"\u00e9\n"},"args":{"k":[true,false,-1.5e3]}}]})",
                    window);
    EXPECT_EQ(summarize(p).events, 21u);
  }
}

// A window that fails after committing events is read again from just past them; the element
// there must still follow a comma (found by fuzzing: small windows took `{...}"x", {...}` for
// three elements).
TEST(ChromeTraceImport, AWindowReadAgainStillNeedsTheCommaAfterTheLastEvent) {
  std::string ev = R"({"ph":"X","pid":1,"tid":1,"ts":1,"dur":2,"name":"a"})";
  std::string many;
  for (int i = 0; i < 8; ++i) many += (i ? "," : "") + ev;
  const std::string text = R"({"traceEvents":[)" + many +
                           R"(,{"ph":"M","pid":1,"name":"process_name","args":{"name":"g"}})"
                           R"("/host:CPU", {"ph":"L","pid":1,"args":{"n":"a\"b"}}, {}],)"
                           R"("metadata":{"x":[1,{"y":"}"}]}})";
  for (size_t window = 64; window <= 1024; window += 16) {
    SCOPED_TRACE(window);
    expect_input_error(text, "invalid JSON", window);
  }
  expect_input_error(text, "invalid JSON", size_t{1} << 20);
}

// Every input fuzzing found against the Chrome trace reader: read in one window and in windows
// of every size from 64 to 1,024 bytes, it gives the same events or is refused in all of them.
TEST(ChromeTraceImport, FuzzFindingsReadAlikeInEveryWindowSize) {
  const std::filesystem::path dir =
      std::filesystem::path(testing::source_dir()) / "fuzz" / "regressions" / "chrome_trace";
  size_t inputs = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    std::ifstream in(entry.path(), std::ios::binary);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    ++inputs;
    SCOPED_TRACE(entry.path().filename().string());
    auto read = [&](size_t window) -> std::optional<Summary> {
      try {
        return summarize(import_text(text, window));
      } catch (const InputError&) {
        return std::nullopt;
      }
    };
    const std::optional<Summary> whole = read(size_t{1} << 30);
    for (size_t window = 64; window <= 1024; window += 8) {
      SCOPED_TRACE(window);
      EXPECT_EQ(read(window), whole);
    }
  }
  EXPECT_GE(inputs, 7u);
}

TEST(ChromeTraceImport, TruncatedGzipNamesTheFile) {
  std::ifstream in(test_data(kMatmulTrace), std::ios::binary);
  std::string gz((std::istreambuf_iterator<char>(in)), {});
  std::string path = write_temp("cut.trace.json.gz", gz.substr(0, gz.size() / 2));
  LoadedProfile lp;
  try {
    load_profile({path}, {}, lp);
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), path);
  }
}

}  // namespace
}  // namespace jaxprof
