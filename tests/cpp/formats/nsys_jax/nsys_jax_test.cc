// The nsys-jax importer against the reference figures of process 0 of a 4-process FSDP run (from
// the nsys-jax rules), two processes at once, and bad archives.
#include "jaxprof/formats/nsys_jax/nsys_jax.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <set>

#include "archive_builder.h"
#include "jaxprof/analysis/ops/device_events.h"
#include "jaxprof/common/error.h"
#include "jaxprof/formats/load.h"
#include "jaxprof/io/zip.h"
#include "test_paths.h"

namespace jaxprof {
namespace {

std::string proc(int i) {
  return testing::fixture("nsys-jax/pax_fsdp4_4proc_proc" + std::to_string(i) + ".zip");
}

bool have_fixtures() { return std::ifstream(proc(0)).good() && std::ifstream(proc(1)).good(); }

uint32_t line_named(const Profile& p, const Plane& plane, std::string_view name) {
  for (uint32_t li : plane.lines)
    if (p.str(p.lines[li].name) == name) return li;
  ADD_FAILURE() << "no line " << name;
  return 0;
}

TEST(NsysJax, ReferenceFiguresProcess0) {
  if (!have_fixtures()) GTEST_SKIP() << "no shared nsys-jax fixtures";
  LoadedProfile lp;
  load_profile({proc(0)}, LoadOptions{}, lp);
  const Profile& p = lp.profile;
  ASSERT_EQ(p.planes.size(), 2u);  // the GPU, and the host threads' NVTX ranges
  EXPECT_EQ(p.str(p.planes[0].name), "/device:GPU:0");
  EXPECT_EQ(p.str(p.planes[1].name), "/host:CPU");
  EXPECT_EQ(p.hosts[0].name, "pax_fsdp4_4proc_proc0");
  uint32_t mods = line_named(p, p.planes[0], "XLA Modules");
  uint32_t thunks = line_named(p, p.planes[0], "XLA Thunks");
  p.require_all_lines();
  const Line& ml = p.lines[mods];
  const Line& tl = p.lines[thunks];
  EXPECT_EQ(ml.event_count, 323u);
  EXPECT_EQ(tl.event_count, 13827u);

  // The step function (program 40): 5 executions of 2,610 thunks each.
  std::vector<std::pair<int64_t, int64_t>> steps;
  for (uint32_t e = ml.first_event; e < ml.first_event + ml.event_count; ++e) {
    const ModuleKey& k = p.modules[p.events.module[e]];
    if (k.program_id == 40) {
      EXPECT_EQ(p.str(k.name), "pjit__wrapped_step_fn");
      steps.emplace_back(p.events.start_ps[e], p.events.end_ps(e));
    }
  }
  ASSERT_EQ(steps.size(), 5u);
  const int64_t expect_ns[] = {147966759, 143040768, 127312430, 127464524, 126859056};
  for (size_t i = 0; i < 5; ++i) EXPECT_EQ(steps[i].second - steps[i].first, expect_ns[i] * 1000);
  std::vector<int> per_step(5, 0);
  size_t collectives = 0;
  std::set<size_t> group_sizes;
  for (uint32_t e = tl.first_event; e < tl.first_event + tl.event_count; ++e) {
    const ModuleKey& k = p.modules[p.events.module[e]];
    if (k.program_id == 40)
      for (size_t i = 0; i < 5; ++i)
        if (p.events.start_ps[e] >= steps[i].first && p.events.start_ps[e] <= steps[i].second)
          ++per_step[i];
    const HloModule* m = p.hlo.find(hlo_program_key(k.program_id), p.str(k.name));
    if (!m) continue;
    const HloInstruction* in = m->find(p.str(p.events.hlo_op[e]));
    if (!in) continue;
    std::string_view op = in->opcode;
    if (op.starts_with("all-") || op.starts_with("reduce-scatter") ||
        op.starts_with("collective-permute")) {
      if (op.ends_with("-done")) continue;
      ++collectives;
      for (const auto& g : in->replica_groups) group_sizes.insert(g.size());
    }
  }
  EXPECT_EQ(per_step, (std::vector<int>{2610, 2610, 2610, 2610, 2610}));
  EXPECT_EQ(collectives, 120u);
  EXPECT_EQ(group_sizes, (std::set<size_t>{4}));

  // The thunk line is what the op analyses read.
  auto devices = op_devices(p);
  ASSERT_EQ(devices.size(), 1u);
  EXPECT_EQ(devices[0].lines, std::vector<uint32_t>{thunks});
  // Stats: the op path of a thunk that names one.
  bool found_path = false;
  for (uint32_t e = tl.first_event; e < tl.first_event + tl.event_count && !found_path; ++e)
    if (auto v = p.event_stat(0, e, "tf_op"); v && v->str.starts_with("jit(_psum)/"))
      found_path = true;
  EXPECT_TRUE(found_path);
}

TEST(NsysJax, TwoProcessesAreTwoHostsAndDevices) {
  if (!have_fixtures()) GTEST_SKIP() << "no shared nsys-jax fixtures";
  LoadedProfile lp;
  load_profile({proc(0), proc(1)}, LoadOptions{}, lp);
  const Profile& p = lp.profile;
  ASSERT_EQ(p.hosts.size(), 2u);
  std::set<std::string> planes;
  for (const Plane& pl : p.planes) planes.insert(std::string(p.str(pl.name)));
  EXPECT_EQ(planes, (std::set<std::string>{"/device:GPU:0", "/device:GPU:1", "/host:CPU"}));
  EXPECT_EQ(op_devices(p).size(), 2u);
}

class TempFile {
 public:
  explicit TempFile(const std::string& bytes) {
    char name[] = "/tmp/jaxprof_nsys_test_XXXXXX";
    int fd = mkstemp(name);
    path_ = name;
    if (fd >= 0) {
      if (::write(fd, bytes.data(), bytes.size()) != static_cast<ssize_t>(bytes.size()))
        path_ += "!";
      ::close(fd);
    }
  }
  ~TempFile() { std::remove(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::string load_error(const std::string& bytes) {
  TempFile f(bytes);
  LoadedProfile lp;
  try {
    load_profile({f.path()}, LoadOptions{}, lp);
    lp.profile.require_all_lines();
  } catch (const InputError& e) {
    EXPECT_NE(e.file().find(f.path()), std::string::npos) << e.what();
    return e.reason();
  }
  return "";
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// The members of a real archive, with some replaced (or added).
std::vector<std::pair<std::string, std::string>> members_of(
    const std::string& path, const std::map<std::string, std::string>& replace) {
  ZipArchive zip(Buffer::open(path));
  std::vector<std::pair<std::string, std::string>> out;
  std::vector<uint8_t> storage;
  for (const ZipEntry& e : zip.entries()) {
    auto r = replace.find(e.name);
    out.emplace_back(e.name, r != replace.end() ? r->second : std::string(zip.read(e, storage)));
  }
  return out;
}

TEST(NsysJax, BadArchives) {
  EXPECT_NE(load_error(testing::make_zip({{"../evil", "x"}})).find("unsafe name"),
            std::string::npos);
  EXPECT_NE(load_error(testing::make_zip({{"/etc/passwd", "x"}})).find("unsafe name"),
            std::string::npos);
  EXPECT_NE(load_error(testing::make_zip({{"readme.txt", "x"}})).find("not an nsys-jax archive"),
            std::string::npos);
  EXPECT_NE(load_error(testing::make_zip({{"nvtx_gpu_proj_trace/trace.parquet", "PAR1xxPAR1"}}))
                .find("Parquet"),
            std::string::npos);
  if (!have_fixtures()) return;
  // A corrupt HLO dump in an otherwise valid archive: the dump is named, and xz blamed.
  std::string corrupt_xz =
      "\xfd"
      "7zXZ" +
      std::string(1, '\0') + std::string(40, 'x');
  const std::string dump =
      "dump/module_0040.pjit__wrapped_step_fn.sm_8.0_gpu_after_optimizations.hlo.pb.xz";
  std::string reason = load_error(testing::make_zip(members_of(proc(0), {{dump, corrupt_xz}})));
  EXPECT_NE(reason.find("xz"), std::string::npos) << reason;
  std::string whole = read_file(proc(0));
  // Truncations anywhere give an InputError (never a crash).
  for (size_t n : {size_t{100}, whole.size() / 2, whole.size() - 30, whole.size() - 1})
    EXPECT_NE(load_error(whole.substr(0, n)), "") << n;
  // A flipped byte inside the stored trace member fails its CRC.
  std::string flipped = whole;
  size_t at = flipped.find("PAR1");
  ASSERT_NE(at, std::string::npos);
  flipped[at + 100] ^= 0x55;
  EXPECT_NE(load_error(flipped), "");
}

TEST(NsysJax, ZipReaderRefusesBombs) {
  // A member declaring a huge size from a few bytes is refused before inflating.
  std::string z = testing::make_zip({{"a", "x"}});
  // Patch method to deflate and the declared size to 4 GiB - 1 in the central directory.
  size_t cd = z.find("PK\x01\x02");
  ASSERT_NE(cd, std::string::npos);
  z[cd + 10] = 8;
  z[cd + 24] = z[cd + 25] = z[cd + 26] = z[cd + 27] = '\xff';
  EXPECT_NE(load_error(z).find("decompression bomb"), std::string::npos);
}

}  // namespace
}  // namespace jaxprof
