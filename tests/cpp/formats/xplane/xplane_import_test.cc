// The XSpace importer on real profiles: counts and totals checked against values derived
// independently (a separate Python wire walk over the same files), and every kind of bad input.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <random>
#include <set>

#include "jaxprof/analysis/steps/module_executions.h"
#include "jaxprof/common/error.h"
#include "jaxprof/formats/load.h"
#include "jaxprof/formats/xplane/xplane.h"
#include "jaxprof/wire/reader.h"
#include "test_paths.h"

namespace jaxprof {
namespace {

using testing::fixture;
using testing::test_data;

struct PlaneTotals {
  uint64_t events = 0;
  int64_t duration_ps = 0;
  bool operator==(const PlaneTotals&) const = default;
};

std::map<std::string, PlaneTotals> totals(const Profile& p) {
  std::map<std::string, PlaneTotals> out;
  for (const Line& line : p.lines) {
    PlaneTotals& t = out[std::string(p.str(p.planes[line.plane].name))];
    t.events += line.event_count;
    for (uint32_t e = line.first_event; e < line.first_event + line.event_count; ++e)
      t.duration_ps += p.events.duration_ps[e];
  }
  return out;
}

LoadedProfile load(const std::string& path, unsigned threads = 0) {
  LoadedProfile out;
  LoadOptions o;
  o.import.threads = threads;
  load_profile({path}, o, out);
  out.profile.require_all_lines();
  return out;
}

struct Expected {
  const char* file;
  uint64_t events;
  std::vector<std::tuple<const char*, uint64_t, int64_t>> planes;
};

class RealProfiles : public ::testing::TestWithParam<Expected> {};

TEST_P(RealProfiles, EventCountsAndDurationTotalsMatch) {
  const Expected& want = GetParam();
  for (unsigned threads : {1u, 2u, 7u}) {
    LoadedProfile lp = load(fixture(std::string("xplane/") + want.file), threads);
    EXPECT_EQ(lp.profile.events.size(), want.events) << threads << " threads";
    auto t = totals(lp.profile);
    for (auto [plane, events, dur] : want.planes) {
      EXPECT_EQ(t[plane].events, events) << plane;
      EXPECT_EQ(t[plane].duration_ps, dur) << plane;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, RealProfiles,
                         ::testing::Values(Expected{"mi300x_jax_conv.xplane.pb",
                                                    3650,
                                                    {{"/device:GPU:0", 60, 4000165000},
                                                     {"/device:GPU:7", 25, 3502165000},
                                                     {"/host:CPU", 3415, 1911823171000}}},
                                           Expected{"mi300x_jax_elementwise.xplane.pb",
                                                    4623,
                                                    {{"/device:GPU:0", 75, 3880724000},
                                                     {"/host:CPU", 4548, 87851583000}}},
                                           Expected{"mi300x_jax_gemm.xplane.pb",
                                                    3782,
                                                    {{"/device:GPU:0", 54, 3475484000},
                                                     {"/host:CPU", 3728, 86504493000}}},
                                           Expected{"tf_v100_8gpu_training.xplane.pb",
                                                    23128,
                                                    {{"/device:GPU:1", 19, 33792000},
                                                     {"/device:GPU:4", 3875, 187186936000},
                                                     {"/device:GPU:6", 3880, 194691821000},
                                                     {"/host:CPU", 15354, 188061510000}}},
                                           Expected{"tpu_4chip_inference.xplane.pb",
                                                    26723,
                                                    {{"/device:TPU:0", 2317, 355224870336580},
                                                     {"/device:TPU:3", 1712, 157622183379178},
                                                     {"/host:CPU", 19270, 1060759394595000}}}));

TEST(XSpaceImport, LinesAreSortedAndRelativeToTheEarliestLine) {
  LoadedProfile lp = load(fixture("xplane/mi300x_jax_gemm.xplane.pb"));
  const Profile& p = lp.profile;
  int64_t earliest = INT64_MAX;
  for (const Line& line : p.lines) {
    for (uint32_t e = line.first_event + 1; e < line.first_event + line.event_count; ++e)
      ASSERT_LE(p.events.start_ps[e - 1], p.events.start_ps[e]);
    if (line.event_count) earliest = std::min(earliest, line.timestamp_ns);
  }
  EXPECT_EQ(p.base_ns, earliest);
  // The first GPU kernel: Stream #16 at 711141 ns + 661861000 ps (checked with a wire dump).
  for (const Line& line : p.lines) {
    if (p.str(line.name) != "Stream #16(Kernel)") continue;
    EXPECT_EQ(p.events.start_ps[line.first_event], (711141 - earliest) * 1000 + 661861000);
    EXPECT_EQ(p.events.duration_ps[line.first_event], 4320000);
    EXPECT_EQ(p.event_name(line.first_event), "__amd_rocclr_copyBuffer.kd");
  }
}

TEST(XSpaceImport, StatsAreDecodedWithRefsResolved) {
  LoadedProfile lp = load(fixture("xplane/mi300x_jax_gemm.xplane.pb"));
  const Profile& p = lp.profile;
  uint32_t gpu0 = 0;
  for (uint32_t i = 0; i < p.planes.size(); ++i)
    if (p.str(p.planes[i].name) == "/device:GPU:0") gpu0 = i;
  auto vendor = p.plane_stat(gpu0, "device_vendor");
  ASSERT_TRUE(vendor);
  EXPECT_EQ(vendor->str, "AMD");
  EXPECT_EQ(p.plane_stat(gpu0, "core_count")->as_int(), 304);
  EXPECT_EQ(p.plane_stat(gpu0, "memory_bandwidth")->kind, StatKind::kUint64);
  EXPECT_EQ(p.plane_stat(gpu0, "memory_bandwidth")->u, 2662400000000u);
  // A wrapped_broadcast kernel: hlo_op and hlo_module are refs, program_id an int64.
  bool found = false;
  for (uint32_t e = 0; e < p.events.size() && !found; ++e) {
    if (p.event_name(e) != "wrapped_broadcast.kd") continue;
    found = true;
    EXPECT_EQ(p.str(p.events.hlo_op[e]), "wrapped_broadcast");
    EXPECT_EQ(p.str(p.modules[p.events.module[e]].name), "jit_broadcast_in_dim");
    EXPECT_EQ(p.modules[p.events.module[e]].program_id, 3u);
    auto kd = p.event_stat(gpu0, e, "kernel_details");
    ASSERT_TRUE(kd);
    EXPECT_EQ(kd->kind, StatKind::kRef);
    EXPECT_EQ(kd->str, " grid:256,1,1 block:256,1,1 private_mem:0 group_mem:0 occ_pct:0");
  }
  EXPECT_TRUE(found);
}

TEST(XSpaceImport, TpuOpNamesComeFromTheHloText) {
  LoadedProfile lp = load(fixture("xplane/tpu_4chip_inference.xplane.pb"));
  const Profile& p = lp.profile;
  // "%copy-start.1 = (f32[...]) copy-start(...)" is op copy-start.1 on every chip, though on TPU:0
  // its display name is "async-copy".
  int found = 0, renamed = 0;
  for (const EventMetadata& m : p.event_metadata) {
    if (!p.str(m.name).starts_with("%copy-start.1 = ")) continue;
    ++found;
    renamed += p.str(m.display_name) == "async-copy";
    EXPECT_EQ(p.str(m.hlo_op), "copy-start.1");
    EXPECT_EQ(m.program_id, 12190760917235803885u);
  }
  EXPECT_GE(found, 4);
  EXPECT_GE(renamed, 1);
}

TEST(XSpaceImport, GzipAndPlainGiveTheSameProfile) {
  LoadedProfile gz = load(test_data("jax_cpu_matmul.xplane.pb.gz"));
  EXPECT_TRUE(gz.profile.buffers.front()->compressed());
  auto t = totals(gz.profile);
  LoadedProfile plain = load(test_data("jax_cpu_matmul"));
  EXPECT_EQ(t, totals(plain.profile));
  EXPECT_EQ(gz.profile.events.size(), plain.profile.events.size());
}

// Handing the pages back after counting (as `jaxprof ops` asks) or keeping them mapped, or
// never handing any back: the same events, and stats read from the file after the decode agree.
TEST(XSpaceImport, PageReleasePolicyChangesNothingRead) {
  const std::string path = fixture("xplane/tf_v100_8gpu_training.xplane.pb");
  std::vector<std::unique_ptr<LoadedProfile>> loaded;
  for (auto [release, counted] : {std::pair(true, true), {true, false}, {false, false}}) {
    LoadOptions o;
    o.import.release_pages = release;
    o.import.release_counted = counted;
    load_profile({path}, o, *loaded.emplace_back(std::make_unique<LoadedProfile>()));
    loaded.back()->profile.require_all_lines();
  }
  const Profile& a = loaded[0]->profile;
  for (size_t k = 1; k < loaded.size(); ++k) {
    const Profile& b = loaded[k]->profile;
    ASSERT_EQ(a.events.size(), b.events.size());
    EXPECT_EQ(totals(a), totals(b));
    for (uint32_t e = 0; e < a.events.size(); e += 97) {
      ASSERT_EQ(a.events.start_ps[e], b.events.start_ps[e]) << e;
      ASSERT_EQ(a.events.metadata[e], b.events.metadata[e]) << e;
      ASSERT_EQ(a.events.hlo_op[e], b.events.hlo_op[e]) << e;
    }
    for (uint32_t li = 0; li < a.lines.size(); li += 3) {
      const Line& line = a.lines[li];
      if (line.event_count == 0) continue;
      std::vector<Stat> sa = a.event_stats(line.plane, line.first_event);
      std::vector<Stat> sb = b.event_stats(line.plane, line.first_event);
      ASSERT_EQ(sa.size(), sb.size()) << li;
      for (size_t i = 0; i < sa.size(); ++i)
        EXPECT_EQ(sa[i].value.to_string(), sb[i].value.to_string());
    }
  }
}

// Forgetting decoded lines (as the export does once a line is written) and decoding them again
// gives every column back as it was, the device clock and kernel ids included.
TEST(XSpaceImport, ForgottenLinesDecodeAgainTheSame) {
  for (const char* name :
       {"xplane/tpu_4chip_inference.xplane.pb", "xplane/mi300x_jax_conv.xplane.pb"}) {
    LoadedProfile lp;
    LoadOptions o;
    o.import.release_counted = true;
    load_profile({fixture(name)}, o, lp);
    const Profile& p = lp.profile;
    p.require_all_lines();
    struct Slot {
      int64_t start, duration, correlation, device_duration;
      uint32_t metadata, raw, hlo_op, module;
      bool device_clock;
      bool operator==(const Slot&) const = default;
    };
    auto slots = [&] {
      std::vector<Slot> out;
      for (const Line& line : p.lines)
        for (uint32_t e = line.first_event; e < line.first_event + line.event_count; ++e)
          out.push_back({p.events.start_ps[e], p.events.duration_ps[e],
                         line.kernel_ids ? p.events.correlation_id[e] : 0,
                         line.device_clock ? p.events.device_duration_ps[e] : 0,
                         p.events.metadata[e], p.events.raw[e], p.events.hlo_op[e],
                         p.events.module[e], p.on_device_clock(e)});
      return out;
    };
    const std::vector<Slot> before = slots();
    std::vector<uint32_t> all(p.lines.size());
    for (uint32_t li = 0; li < all.size(); ++li) all[li] = li;
    p.forget_lines(all);
    for (const Line& line : p.lines) EXPECT_TRUE(!line.decoded || line.event_count == 0);
    p.require_all_lines();
    EXPECT_TRUE(slots() == before) << name;
  }
}

TEST(XSpaceImport, LogDirectoryFindsSessionAndHost) {
  LoadedProfile lp = load(test_data("jax_cpu_8dev"));
  EXPECT_EQ(lp.files.session, "session");
  ASSERT_EQ(lp.profile.hosts.size(), 1u);
  // Op events name jit_train_step's program id 0; its metadata entry is keyed 1 but says
  // program_id 0 in a stat.
  const HloModule* train = lp.profile.hlo.find(0, {});
  ASSERT_NE(train, nullptr);
  EXPECT_EQ(train->name, "jit_train_step");
  const HloModule* sse = lp.profile.hlo.find(2, {});
  ASSERT_NE(sse, nullptr);
  EXPECT_EQ(sse->name, "jit_global_sse");
}

TEST(XSpaceImport, SeveralFilesBecomeSeveralHostsOnOneClock) {
  LoadedProfile lp;
  load_profile(
      {fixture("xplane/mi300x_jax_gemm.xplane.pb"), fixture("xplane/mi300x_jax_conv.xplane.pb")},
      {}, lp);
  lp.profile.require_all_lines();
  ASSERT_EQ(lp.profile.hosts.size(), 2u);
  EXPECT_EQ(lp.profile.hosts[0].name, "mi300x_jax_gemm");
  EXPECT_EQ(lp.profile.hosts[1].name, "mi300x_jax_conv");
  EXPECT_EQ(lp.profile.events.size(), 3782u + 3650u);
  int64_t min_start = INT64_MAX;
  for (size_t e = 0; e < lp.profile.events.size(); ++e)
    min_start = std::min(min_start, lp.profile.events.start_ps[e]);
  EXPECT_GE(min_start, 0);
}

// ---- bad input ----

std::string temp_file(const std::string& name, const std::string& contents) {
  std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path, std::ios::binary) << contents;
  return path;
}

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// ---- metadata ids per line, whatever the field order ----

void put_varint(std::string& out, uint64_t v) {
  do {
    uint8_t b = v & 0x7f;
    v >>= 7;
    out.push_back(static_cast<char>(v ? b | 0x80 : b));
  } while (v);
}

// Appends field `f` to `out`, with `body` as its bytes when it is length-delimited.
void put_field(std::string& out, const wire::Field& f, const std::string& body) {
  put_varint(out, (uint64_t{f.number} << 3) | static_cast<uint8_t>(f.type));
  switch (f.type) {
    case wire::WireType::kVarint:
      put_varint(out, f.value);
      break;
    case wire::WireType::kLen:
      put_varint(out, body.size());
      out += body;
      break;
    case wire::WireType::kFixed64:
      out.append(reinterpret_cast<const char*>(&f.value), 8);
      break;
    default:
      out.append(reinterpret_cast<const char*>(&f.value), 4);
      break;
  }
}

// The same XSpace with every event's offset_ps written before its other fields, as some writers
// (and the benchmark's scaling tool) do. `depth`: 0 XSpace, 1 XPlane, 2 XLine, 3 XEvent.
std::string offset_first(std::string_view msg, int depth) {
  const auto* origin = reinterpret_cast<const uint8_t*>(msg.data());
  wire::Reader r(msg, origin);
  wire::Field f;
  std::string head, rest;
  const uint32_t nested[3] = {1, 3, 4};  // planes, lines, events
  while (r.next(f)) {
    std::string& out = depth == 3 && f.number == 2 ? head : rest;
    bool inner = depth < 3 && f.number == nested[depth] && f.type == wire::WireType::kLen;
    put_field(out, f, inner ? offset_first(f.bytes, depth + 1) : std::string(f.bytes));
  }
  return head + rest;
}

TEST(XSpaceImport, LineMetadataIdsDoNotDependOnFieldOrder) {
  std::string original = fixture("xplane/tpu_4chip_inference.xplane.pb");
  std::string reordered = temp_file("offset_first.xplane.pb", offset_first(read(original), 0));
  ASSERT_NE(read(original), read(reordered));
  LoadedProfile a, b;
  load_profile({original}, {}, a);
  load_profile({reordered}, {}, b);
  ASSERT_EQ(a.profile.lines.size(), b.profile.lines.size());
  size_t known = 0;
  for (size_t li = 0; li < a.profile.lines.size(); ++li) {
    const Line& la = a.profile.lines[li];
    const Line& lb = b.profile.lines[li];
    EXPECT_EQ(la.metadata_bits, lb.metadata_bits) << a.profile.str(la.name);
    if (la.event_count > 0) {
      EXPECT_FALSE(lb.metadata_bits.empty()) << a.profile.str(la.name);
      known += !la.metadata_bits.empty();
    }
  }
  EXPECT_GT(known, 100u);  // the fixture's writer puts the metadata id first: its bits are known
  // And the events decode the same.
  a.profile.require_all_lines();
  b.profile.require_all_lines();
  EXPECT_EQ(totals(a.profile), totals(b.profile));
}

void expect_input_error(const std::string& path, const std::string& words) {
  try {
    load(path);
    FAIL() << "no error for " << path;
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), path);
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << "one line";
  }
}

// Scanning a line not decoded picks out the same events, in the same order and with the same
// stats, as decoding it and filtering its columns. The offset-first copy of the TPU fixture
// takes the scan's slower path (metadata id not first).
TEST(XSpaceImport, ScanLineMatchesTheDecodedLine) {
  std::string tpu = fixture("xplane/tpu_4chip_inference.xplane.pb");
  std::string reordered = temp_file("scan_offset_first.xplane.pb", offset_first(read(tpu), 0));
  for (const std::string& path : {tpu, reordered, fixture("xplane/mi300x_jax_conv.xplane.pb"),
                                  fixture("xplane/tf_v100_8gpu_training.xplane.pb")}) {
    LoadedProfile scanned, decoded;
    load_profile({path}, {}, scanned);
    load_profile({path}, {}, decoded);
    decoded.profile.require_all_lines();
    const Profile& a = scanned.profile;
    const Profile& b = decoded.profile;
    const StringId corr[] = {a.strings.find("correlation_id"), a.strings.find("run_id")};
    size_t picked = 0, lines = 0;
    for (uint32_t li = 0; li < a.lines.size(); ++li) {
      if (a.lines[li].event_count == 0) continue;
      // Every third metadata entry: a subset whose order the scan must get right on its own.
      std::vector<uint8_t> want(a.event_metadata.size());
      for (uint32_t m = 0; m < want.size(); ++m) want[m] = m % 3 == 1;
      std::vector<ScannedEvent> got;
      a.scan_line(li, want, got);
      EXPECT_FALSE(a.lines[li].decoded) << path;
      const Line& line = b.lines[li];
      std::vector<uint32_t> expected;
      for (uint32_t e = line.first_event; e < line.first_event + line.event_count; ++e)
        if (want[b.events.metadata[e]]) expected.push_back(e);
      ASSERT_EQ(got.size(), expected.size()) << path << " line " << li;
      std::vector<ScannedEvent> from_columns;  // a decoded line is read from its columns
      b.scan_line(li, want, from_columns);
      ASSERT_EQ(from_columns.size(), expected.size());
      for (size_t k = 0; k < expected.size(); ++k) EXPECT_EQ(from_columns[k].event, expected[k]);
      ++lines;
      for (size_t k = 0; k < got.size(); ++k) {
        uint32_t e = expected[k];
        EXPECT_EQ(got[k].start_ps, b.events.start_ps[e]);
        EXPECT_EQ(got[k].duration_ps, b.events.duration_ps[e]);
        EXPECT_EQ(got[k].metadata, b.events.metadata[e]);
        EXPECT_EQ(got[k].raw, b.events.raw[e]);
        EXPECT_EQ(got[k].event, ScannedEvent::kNotDecoded);
        std::optional<StatValue> x[2], y[2];
        a.find_own_event_stats(line.plane, got[k], corr, x);
        b.sources[b.planes[line.plane].source]->find_event_stats(b, line.plane, e, corr, y);
        for (int i = 0; i < 2; ++i) {
          ASSERT_EQ(x[i].has_value(), y[i].has_value());
          if (x[i]) {
            EXPECT_EQ(x[i]->as_int(), y[i]->as_int());
          }
        }
        ++picked;
      }
    }
    EXPECT_GT(lines, 0u) << path;
    EXPECT_GT(picked, 100u) << path;
  }
}

// A StatReader gives each event's first own stat of each name, as the event's decoded stats do:
// integers, text and refs, a name the plane lacks, the same name twice; for decoded and scanned
// events, metadata id first or offset first.
TEST(XSpaceImport, StatReaderMatchesTheDecodedStats) {
  std::string gpu = fixture("xplane/tf_v100_8gpu_training.xplane.pb");
  std::string reordered = temp_file("reader_offset_first.xplane.pb", offset_first(read(gpu), 0));
  for (const std::string& path :
       {gpu, reordered, fixture("xplane/tpu_4chip_inference.xplane.pb")}) {
    LoadedProfile lp;
    load_profile({path}, {}, lp);
    Profile& p = lp.profile;
    std::vector<StringId> names;
    for (const char* n : {"correlation_id", "group_id", "hlo_op", "kernel_details", "run_id",
                          "no such stat", "correlation_id"})
      names.push_back(p.strings.find(n));
    size_t checked = 0, found = 0;
    for (uint32_t pi = 0; pi < p.planes.size(); ++pi) {
      std::unique_ptr<StatReader> reader = p.stat_reader(pi, names);
      for (uint32_t li : p.planes[pi].lines) {
        std::vector<ScannedEvent> scanned;
        p.scan_line(li, std::vector<uint8_t>(p.event_metadata.size(), 1), scanned);
        p.require_lines({li});
        const Line& line = p.lines[li];
        ASSERT_EQ(scanned.size(), line.event_count);
        for (uint32_t k = 0; k < line.event_count; ++k) {
          uint32_t e = line.first_event + k;
          std::vector<std::optional<StatValue>> want(names.size());
          for (const Stat& s : p.event_stats(pi, e))
            for (size_t i = 0; i < names.size(); ++i)
              if (s.name == names[i] && !want[i]) want[i] = s.value;
          ScannedEvent decoded{.metadata = p.events.metadata[e], .event = e};
          for (const ScannedEvent& ev : {scanned[k], decoded}) {
            std::vector<std::optional<StatValue>> got(names.size());
            reader->read(ev, got);
            for (size_t i = 0; i < names.size(); ++i) {
              ASSERT_EQ(got[i].has_value(), want[i].has_value()) << path << " event " << e;
              if (!got[i]) continue;
              ++found;
              EXPECT_EQ(got[i]->kind, want[i]->kind);
              EXPECT_EQ(got[i]->as_int(), want[i]->as_int());
              EXPECT_EQ(got[i]->str, want[i]->str);
            }
            ++checked;
          }
        }
      }
    }
    EXPECT_GT(checked, 1000u) << path;
    EXPECT_GT(found, 1000u) << path;
  }
}

// visit_line hands over the events scan_line gives (in file order, which a stable sort by start,
// longest first, turns into line order) with the stats a StatReader reads of each; the same from a
// decoded line, and with more names than the importer looks up by id.
TEST(XSpaceImport, VisitLineIsScanLineWithItsStats) {
  std::string gpu = fixture("xplane/tf_v100_8gpu_training.xplane.pb");
  std::string reordered = temp_file("visit_offset_first.xplane.pb", offset_first(read(gpu), 0));
  for (const std::string& path : {gpu, reordered, fixture("xplane/tpu_4chip_inference.xplane.pb"),
                                  fixture("xplane/mi300x_jax_conv.xplane.pb")}) {
    LoadedProfile scanned_lp, decoded_lp;
    load_profile({path}, {}, scanned_lp);
    load_profile({path}, {}, decoded_lp);
    decoded_lp.profile.require_all_lines();
    const Profile& a = scanned_lp.profile;
    const Profile& b = decoded_lp.profile;
    std::vector<StringId> few, many;
    for (const char* n : {"correlation_id", "group_id", "hlo_op", "no such stat", "correlation_id"})
      few.push_back(a.strings.find(n));
    for (const char* n : {"device_id", "tf_op", "name", "hlo_module", "program_id",
                          "kernel_details", "run_id", "occurrences"})
      many.push_back(a.strings.find(n));
    many.insert(many.end(), few.begin(), few.end());  // past the importer's limit of 8
    std::vector<uint8_t> want(a.event_metadata.size());
    for (uint32_t m = 0; m < want.size(); ++m) want[m] = m % 4 != 3;
    size_t visited = 0, found = 0;
    for (uint32_t li = 0; li < a.lines.size(); ++li) {
      const uint32_t plane = a.lines[li].plane;
      std::vector<ScannedEvent> expected;
      a.scan_line(li, want, expected);
      for (const std::vector<StringId>& names : {few, many}) {
        std::unique_ptr<StatReader> reader = a.stat_reader(plane, names);
        for (const Profile* p : {&a, &b}) {
          std::vector<ScannedEvent> got;
          std::vector<std::vector<std::optional<StatValue>>> stats;
          p->visit_line(li, want, names,
                        [&](const ScannedEvent& e, std::span<const std::optional<StatValue>> own) {
                          got.push_back(e);
                          stats.emplace_back(own.begin(), own.end());
                        });
          std::vector<size_t> order(got.size());
          for (size_t k = 0; k < order.size(); ++k) order[k] = k;
          std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) {
            const ScannedEvent &ex = got[x], &ey = got[y];
            return ex.start_ps != ey.start_ps ? ex.start_ps < ey.start_ps
                                              : ex.duration_ps > ey.duration_ps;
          });
          ASSERT_EQ(got.size(), expected.size()) << path << " line " << li;
          for (size_t k = 0; k < order.size(); ++k) {
            const ScannedEvent& g = got[order[k]];
            const ScannedEvent& x = expected[k];
            EXPECT_EQ(g.start_ps, x.start_ps);
            EXPECT_EQ(g.duration_ps, x.duration_ps);
            EXPECT_EQ(g.metadata, x.metadata);
            EXPECT_EQ(g.raw, x.raw);
            EXPECT_EQ(g.event == ScannedEvent::kNotDecoded, p == &a);
            std::vector<std::optional<StatValue>> want_stats(names.size());
            reader->read(x, want_stats);
            const auto& own = stats[order[k]];
            ASSERT_EQ(own.size(), names.size());
            for (size_t i = 0; i < names.size(); ++i) {
              ASSERT_EQ(own[i].has_value(), want_stats[i].has_value()) << path << " line " << li;
              if (!own[i]) continue;
              ++found;
              EXPECT_EQ(own[i]->kind, want_stats[i]->kind);
              EXPECT_EQ(own[i]->as_int(), want_stats[i]->as_int());
              EXPECT_EQ(own[i]->str, want_stats[i]->str);
            }
            ++visited;
          }
        }
      }
      if (a.lines[li].event_count > 0) {
        EXPECT_FALSE(a.lines[li].decoded) << path;
      }
    }
    EXPECT_GT(visited, 1000u) << path;
    EXPECT_GT(found, 1000u) << path;
  }
}

// The same XSpace with the correlation_id stats of every other event (of every plane) written as
// text ("123" for 123), which readers turn back into the number. `depth` as offset_first's.
std::string correlation_ids_as_text(std::string_view msg, int depth, int64_t stat_id = -1,
                                    uint64_t* seen = nullptr) {
  const auto* origin = reinterpret_cast<const uint8_t*>(msg.data());
  wire::Reader r(msg, origin);
  wire::Field f;
  if (depth == 1) {  // the plane's stat metadata id named correlation_id
    while (r.next(f)) {
      if (f.number != 5 || f.type != wire::WireType::kLen) continue;
      wire::Reader entry(f.bytes, origin);
      wire::Field g;
      int64_t key = -1;
      while (entry.next(g)) {
        if (g.number == 1) key = g.as_int64();
        if (g.number != 2 || g.type != wire::WireType::kLen) continue;
        wire::Reader meta(g.bytes, origin);
        wire::Field h;
        while (meta.next(h))
          if (h.number == 2 && h.bytes == "correlation_id") stat_id = key;
      }
    }
    r = wire::Reader(msg, origin);
  }
  if (depth == 4) {  // an XStat: rewritten when it is a correlation_id with an integer value
    std::optional<int64_t> id, value;
    while (r.next(f)) {
      if (f.number == 1) id = f.as_int64();
      if (f.number == 3 || f.number == 4) value = f.as_int64();
    }
    if (id == stat_id && value && (*seen)++ % 2 == 0) {
      std::string out, text = std::to_string(*value);
      put_varint(out, 1 << 3);
      put_varint(out, static_cast<uint64_t>(*id));
      put_varint(out, (5 << 3) | 2);
      put_varint(out, text.size());
      return out + text;
    }
    return std::string(msg);
  }
  std::string out;
  const uint32_t nested[4] = {1, 3, 4, 4};  // planes, lines, events, stats
  while (r.next(f)) {
    bool inner = f.number == nested[depth] && f.type == wire::WireType::kLen;
    put_field(
        out, f,
        inner ? correlation_ids_as_text(f.bytes, depth + 1, stat_id, seen) : std::string(f.bytes));
  }
  return out;
}

// Device events' correlation_id and group_id are decoded with them, as their own stats read from
// the file give them: the integer, kNoStat where the event has none, kStatInFile where the stat
// is not an integer (then module executions read it from the file, with the same result).
TEST(XSpaceImport, KernelIdsAreTheEventsOwnStats) {
  std::string gpu = fixture("xplane/mi300x_jax_conv.xplane.pb");
  uint64_t rewritten = 0;
  std::string text_ids = temp_file("text_correlation_ids.xplane.pb",
                                   correlation_ids_as_text(read(gpu), 0, -1, &rewritten));
  std::vector<std::unique_ptr<LoadedProfile>> loaded;  // they hold the executions
  std::vector<const std::vector<DeviceExecutions>*> executions;
  for (const std::string& path :
       {gpu, text_ids, fixture("xplane/tf_v100_8gpu_training.xplane.pb")}) {
    LoadedProfile& lp = *loaded.emplace_back(std::make_unique<LoadedProfile>());
    load_profile({path}, {}, lp);
    const Profile& p = lp.profile;
    p.require_all_lines();
    const StringId names[2] = {p.strings.find("correlation_id"), p.strings.find("group_id")};
    size_t kernels = 0, with_id = 0, as_text = 0;
    for (uint32_t li = 0; li < p.lines.size(); ++li) {
      const Line& line = p.lines[li];
      bool ids = is_device_plane(p.planes[line.plane].kind) &&
                 (p.plane_may_have_stat(line.plane, "correlation_id") ||
                  p.plane_may_have_stat(line.plane, "group_id"));
      ASSERT_EQ(line.kernel_ids, ids && line.event_count > 0) << path << " line " << li;
      if (!line.kernel_ids) continue;
      for (uint32_t e = line.first_event; e < line.first_event + line.event_count; ++e) {
        std::optional<StatValue> own[2];
        p.find_own_event_stats(
            line.plane, ScannedEvent{.metadata = p.events.metadata[e], .event = e}, names, own);
        const int64_t column[2] = {p.events.correlation_id[e], p.events.group_id[e]};
        for (int i = 0; i < 2; ++i) {
          if (!own[i]) {
            EXPECT_EQ(column[i], Events::kNoStat) << path << " event " << e;
          } else if (own[i]->kind == StatKind::kInt64 || own[i]->kind == StatKind::kUint64) {
            EXPECT_EQ(column[i], *own[i]->as_int()) << path << " event " << e;
          } else {
            EXPECT_EQ(column[i], Events::kStatInFile) << path << " event " << e;
            as_text += i == 0;
          }
        }
        ++kernels;
        with_id += own[0].has_value();
      }
    }
    // Device events, and those with a correlation id (all kernels; not the V100's memcpy and
    // other activity lines), as tests/python/xplane_oracle.py counts them.
    const bool v100 = path.find("v100") != std::string::npos;
    EXPECT_EQ(kernels, v100 ? 7774u : 235u) << path;
    EXPECT_EQ(with_id, v100 ? 1556u : 235u) << path;
    if (path == text_ids) {
      EXPECT_GT(as_text, 50u);  // every other correlation id in the file, host ones included
      EXPECT_LT(as_text, with_id);
    } else {
      EXPECT_EQ(as_text, 0u) << path;
    }
    executions.push_back(&module_executions(p));
  }
  ASSERT_GT(rewritten, 0u);
  // Text ids change nothing the analyses find.
  ASSERT_EQ(executions[0]->size(), executions[1]->size());
  size_t grouped = 0;
  for (size_t d = 0; d < executions[0]->size(); ++d) {
    const DeviceExecutions &a = (*executions[0])[d], &b = (*executions[1])[d];
    EXPECT_EQ(a.source, ExecutionSource::kHostLaunch);
    EXPECT_EQ(a.source, b.source);
    ASSERT_EQ(a.executions.size(), b.executions.size());
    for (size_t x = 0; x < a.executions.size(); ++x) {
      EXPECT_EQ(a.executions[x].name, b.executions[x].name);
      EXPECT_EQ(a.executions[x].start_ps, b.executions[x].start_ps);
      EXPECT_EQ(a.executions[x].end_ps, b.executions[x].end_ps);
      EXPECT_TRUE(std::ranges::equal(a.executions[x].events, b.executions[x].events));
      grouped += a.executions[x].events.size();
    }
  }
  EXPECT_GT(grouped, 0u);
  // TPU planes declare neither stat: their events get no ids (nor their pages written).
  LoadedProfile tpu;
  load_profile({fixture("xplane/tpu_4chip_inference.xplane.pb")}, {}, tpu);
  tpu.profile.require_all_lines();
  for (const Line& line : tpu.profile.lines) EXPECT_FALSE(line.kernel_ids);
}

// A plane says no to a stat name only when none of its events carries it: checked against
// every stat of every event of the GPU and TPU fixtures.
TEST(XSpaceImport, PlaneMayHaveStatNeverRulesOutAStatItHolds) {
  for (const char* name :
       {"xplane/tpu_4chip_inference.xplane.pb", "xplane/mi300x_jax_conv.xplane.pb"}) {
    LoadedProfile lp;
    load_profile({fixture(name)}, {}, lp);
    Profile& p = lp.profile;
    p.require_all_lines();
    std::vector<std::set<std::string>> held(p.planes.size());
    for (uint32_t li = 0; li < p.lines.size(); ++li) {
      const Line& line = p.lines[li];
      for (uint32_t e = line.first_event; e < line.first_event + line.event_count; ++e)
        for (const Stat& s : p.event_stats(line.plane, e))
          held[line.plane].insert(std::string(p.str(s.name)));
    }
    std::set<std::string> anywhere;
    for (const auto& h : held) anywhere.insert(h.begin(), h.end());
    size_t ruled_out = 0;
    for (uint32_t pi = 0; pi < p.planes.size(); ++pi) {
      for (const std::string& s : held[pi]) EXPECT_TRUE(p.plane_may_have_stat(pi, s)) << s;
      EXPECT_FALSE(p.plane_may_have_stat(pi, "no stat has this name"));
      // Names that other planes use: some are ruled out here, the point of the check.
      for (const std::string& s : anywhere)
        if (!held[pi].count(s)) ruled_out += !p.plane_may_have_stat(pi, s);
    }
    EXPECT_GT(ruled_out, 0u) << name;
  }
}

TEST(BadInput, RealDamagedProfileIsRefused) {
  expect_input_error(fixture("bad/tpu_inference_utf8_mangled.xplane.pb"), "corrupt protobuf");
}

TEST(BadInput, EmptyMissingAndDirectory) {
  expect_input_error(temp_file("empty.xplane.pb", ""), "empty");
  expect_input_error(::testing::TempDir() + "/does-not-exist.xplane.pb", "no such file");
}

TEST(BadInput, EveryTruncationIsRefusedOrConsistent) {
  std::string whole = read(fixture("xplane/mi300x_jax_gemm.xplane.pb"));
  // Cutting a protobuf mid-field must fail; cutting exactly at a plane boundary is a valid (but
  // smaller) XSpace. Either way: no crash, no hang.
  int refused = 0;
  for (size_t cut :
       {size_t{1}, size_t{2}, size_t{100}, whole.size() / 3, whole.size() / 2, whole.size() - 1}) {
    std::string path = temp_file("cut.xplane.pb", whole.substr(0, cut));
    try {
      load(path);
    } catch (const InputError& e) {
      ++refused;
      EXPECT_EQ(e.file(), path);
      EXPECT_GE(e.offset(), 0) << e.what();
    }
  }
  EXPECT_GE(refused, 5);
}

TEST(BadInput, WrongFormats) {
  expect_input_error(temp_file("trace.xplane.pb", "{\"traceEvents\": []}"), "JSON");
  expect_input_error(temp_file("zip.xplane.pb", std::string("PK\x03\x04rest", 8)), "zip");
  std::mt19937 rng(42);
  std::string noise(4096, '\0');
  for (char& c : noise) c = static_cast<char>(rng());
  noise[0] = 0x7f;
  expect_input_error(temp_file("noise.xplane.pb", noise), "not an XSpace");
  // Starts like a plane but claims an absurd length.
  expect_input_error(
      temp_file("absurd.xplane.pb", std::string("\x0a\xff\xff\xff\xff\x0f", 6) + "xx"),
      "longer than");
}

TEST(BadInput, TruncatedAndCorruptGzip) {
  std::string gz = read(test_data("jax_cpu_matmul.xplane.pb.gz"));
  expect_input_error(temp_file("half.xplane.pb.gz", gz.substr(0, gz.size() / 2)), "truncated");
  std::string flipped = gz;
  for (size_t i = 20; i < 60; ++i) flipped[i] = static_cast<char>(flipped[i] ^ 0x5a);
  expect_input_error(temp_file("flip.xplane.pb.gz", flipped), "gzip");
  expect_input_error(temp_file("magic.xplane.pb.gz", std::string("\x1f\x8b", 2)), "gzip");
}

TEST(BadInput, UnknownSessionAndHostListTheChoices) {
  LoadedProfile lp;
  LoadOptions o;
  o.session = "nope";
  try {
    load_profile({test_data("jax_cpu_8dev")}, o, lp);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("sessions: session"), std::string::npos) << e.what();
  }
  o.session.clear();
  o.hosts = {"nohost"};
  try {
    load_profile({test_data("jax_cpu_8dev")}, o, lp);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("no host 'nohost'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace jaxprof
