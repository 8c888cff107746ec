// A run directory of several hosts' XSpace files: read on several threads, it gives the profile
// a one-thread read and a file-by-file import_xspace give, and errors name the first bad file.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "jaxprof/common/error.h"
#include "jaxprof/formats/load.h"
#include "test_paths.h"

namespace jaxprof {
namespace {

namespace fs = std::filesystem;

// A fresh run directory holding `files` (host name -> target) as symlinks.
std::string run_dir(const std::string& name,
                    const std::vector<std::pair<std::string, std::string>>& files) {
  fs::path dir = fs::path(::testing::TempDir()) / name / "plugins" / "profile" / "run";
  fs::remove_all(fs::path(::testing::TempDir()) / name);
  fs::create_directories(dir);
  for (const auto& [host, target] : files)
    fs::create_symlink(fs::absolute(target), dir / (host + ".xplane.pb"));
  return (fs::path(::testing::TempDir()) / name).string();
}

LoadedProfile load(const std::vector<std::string>& paths, unsigned threads, bool decode = true) {
  LoadedProfile lp;
  LoadOptions o;
  o.import.threads = threads;
  load_profile(paths, o, lp);
  if (decode) lp.profile.require_all_lines();
  return lp;
}
LoadedProfile load(const std::string& path, unsigned threads, bool decode = true) {
  return load(std::vector<std::string>{path}, threads, decode);
}

// The files of a run directory made by run_dir(), named one by one (in name order, as discovery
// lists them): the fixtures are not one capture, so the directory itself is refused.
std::vector<std::string> files_of(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(fs::path(dir) / "plugins" / "profile" / "run"))
    out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

// Every part of the model that an import fills, compared field by field; then every event,
// decoded. Decoding interns strings and modules in the order its worker threads meet them, so
// the events' hlo_op and module are compared by what they name.
void expect_same(Profile& a, Profile& b) {
  ASSERT_EQ(a.hosts.size(), b.hosts.size());
  for (size_t i = 0; i < a.hosts.size(); ++i) {
    EXPECT_EQ(a.hosts[i].name, b.hosts[i].name);
    EXPECT_EQ(a.hosts[i].path, b.hosts[i].path);
    EXPECT_EQ(a.hosts[i].base_ns, b.hosts[i].base_ns);
  }
  EXPECT_EQ(a.base_ns, b.base_ns);
  ASSERT_EQ(a.strings.size(), b.strings.size());
  for (StringId i = 0; i < a.strings.size(); ++i) ASSERT_EQ(a.str(i), b.str(i)) << i;
  ASSERT_EQ(a.planes.size(), b.planes.size());
  for (size_t i = 0; i < a.planes.size(); ++i) {
    const Plane &x = a.planes[i], &y = b.planes[i];
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.id, y.id);
    EXPECT_EQ(x.host, y.host);
    EXPECT_EQ(x.buffer, y.buffer);
    EXPECT_EQ(x.source, y.source);
    EXPECT_EQ(x.bytes.size(), y.bytes.size());
    EXPECT_EQ(x.kind, y.kind);
    EXPECT_EQ(x.stats.size(), y.stats.size());
    EXPECT_EQ(x.stat_names, y.stat_names);
    EXPECT_EQ(x.lines, y.lines);
  }
  ASSERT_EQ(a.lines.size(), b.lines.size());
  for (size_t i = 0; i < a.lines.size(); ++i) {
    const Line &x = a.lines[i], &y = b.lines[i];
    EXPECT_EQ(x.plane, y.plane);
    EXPECT_EQ(x.source, y.source);
    EXPECT_EQ(x.id, y.id);
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.timestamp_ns, y.timestamp_ns);
    EXPECT_EQ(x.first_event, y.first_event);
    EXPECT_EQ(x.event_count, y.event_count);
    EXPECT_EQ(x.metadata_bits, y.metadata_bits);
  }
  ASSERT_EQ(a.event_metadata.size(), b.event_metadata.size());
  for (size_t i = 0; i < a.event_metadata.size(); ++i) {
    const EventMetadata &x = a.event_metadata[i], &y = b.event_metadata[i];
    EXPECT_EQ(x.plane, y.plane);
    EXPECT_EQ(x.id, y.id);
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.display_name, y.display_name);
    EXPECT_EQ(x.hlo_op, y.hlo_op);
    EXPECT_EQ(x.hlo_module, y.hlo_module);
    EXPECT_EQ(x.program_id, y.program_id);
  }
  EXPECT_EQ(a.errors, b.errors);
  EXPECT_EQ(a.warnings, b.warnings);
  EXPECT_EQ(a.hlo.modules().size(), b.hlo.modules().size());
  a.require_all_lines();
  b.require_all_lines();
  ASSERT_EQ(a.modules.size(), b.modules.size());
  ASSERT_EQ(a.events.size(), b.events.size());
  for (size_t e = 0; e < a.events.size(); ++e) {
    ASSERT_EQ(a.events.start_ps[e], b.events.start_ps[e]) << e;
    ASSERT_EQ(a.events.duration_ps[e], b.events.duration_ps[e]) << e;
    ASSERT_EQ(a.events.metadata[e], b.events.metadata[e]) << e;
    ASSERT_EQ(a.events.raw[e], b.events.raw[e]) << e;
    ASSERT_EQ(a.str(a.events.hlo_op[e]), b.str(b.events.hlo_op[e])) << e;
    ASSERT_EQ(a.module_label(a.events.module[e]), b.module_label(b.events.module[e])) << e;
  }
}

const std::vector<std::pair<std::string, std::string>> kHosts = {
    {"alpha", testing::fixture("xplane/mi300x_jax_gemm.xplane.pb")},
    {"beta", testing::fixture("xplane/tpu_4chip_inference.xplane.pb")},
    // The same file under a second host name.
    {"gamma", testing::fixture("xplane/mi300x_jax_gemm.xplane.pb")},
    {"delta", testing::fixture("xplane/tf_v100_8gpu_training.xplane.pb")},
};

TEST(MultiHostLoad, ThreadedReadEqualsOneThreadAndFileByFile) {
  for (const auto& [host, path] : kHosts)
    if (!fs::exists(path)) GTEST_SKIP() << path << " not found";
  std::string dir = run_dir("multihost", kHosts);
  EXPECT_THROW(load(dir, 4, false), InputError);  // unrelated fixtures: not one capture
  LoadedProfile threaded = load(files_of(dir), 4, false);
  LoadedProfile one = load(files_of(dir), 1, false);
  ASSERT_EQ(threaded.profile.hosts.size(), 4u);
  // Hosts in name order, as discovery lists them.
  std::vector<std::string> names;
  for (const Host& h : threaded.profile.hosts) names.push_back(h.name);
  EXPECT_EQ(names, (std::vector<std::string>{"alpha", "beta", "delta", "gamma"}));
  expect_same(threaded.profile, one.profile);

  // The import as it was before files were read together: one import_xspace after another.
  Profile seq;
  for (const HostFile& h : threaded.files.hosts) import_xspace(seq, Buffer::open(h.path), h.host);
  index_hlo_from_metadata(seq);
  finish_import(seq);
  LoadedProfile again = load(files_of(dir), 4, false);
  // Named one by one, the files load, with a warning that they are not one capture.
  ASSERT_FALSE(again.profile.warnings.empty());
  EXPECT_NE(again.profile.warnings.back().find("not be hosts of one capture"), std::string::npos);
  again.profile.warnings.pop_back();
  expect_same(again.profile, seq);

  // Each host's events are those of its file read alone, on the common clock.
  for (uint32_t h = 0; h < threaded.profile.hosts.size(); ++h) {
    const Profile& p = threaded.profile;
    LoadedProfile alone = load(p.hosts[h].path, 4);
    const Profile& q = alone.profile;
    int64_t shift_ps = (q.base_ns - p.base_ns) * 1000;
    std::vector<const Line*> lines;
    for (const Plane& plane : p.planes)
      if (plane.host == h)
        for (uint32_t li : plane.lines) lines.push_back(&p.lines[li]);
    ASSERT_EQ(lines.size(), q.lines.size()) << p.hosts[h].name;
    for (size_t i = 0; i < lines.size(); ++i) {
      const Line &x = *lines[i], &y = q.lines[i];
      ASSERT_EQ(p.str(x.name), q.str(y.name));
      ASSERT_EQ(x.event_count, y.event_count);
      for (uint32_t k = 0; k < x.event_count; ++k) {
        uint32_t e = x.first_event + k, f = y.first_event + k;
        ASSERT_EQ(p.events.start_ps[e], q.events.start_ps[f] + shift_ps);
        ASSERT_EQ(p.events.duration_ps[e], q.events.duration_ps[f]);
        ASSERT_EQ(p.event_name(e), q.event_name(f));
      }
    }
  }
  // The two hosts reading one file see the same events at the same times.
  const Profile& p = threaded.profile;
  uint64_t events[4] = {};
  for (const Plane& plane : p.planes)
    for (uint32_t li : plane.lines) events[plane.host] += p.lines[li].event_count;
  EXPECT_EQ(events[0], events[3]);
  EXPECT_GT(events[0], 0u);
}

TEST(MultiHostLoad, ErrorNamesTheFirstBadFileInHostOrder) {
  std::string gemm = testing::fixture("xplane/mi300x_jax_gemm.xplane.pb");
  if (!fs::exists(gemm)) GTEST_SKIP() << gemm << " not found";
  fs::path bad_dir = fs::path(::testing::TempDir()) / "multihost_bad_files";
  fs::create_directories(bad_dir);
  // A real file cut inside its first plane, and one that is not an XSpace at all.
  std::ifstream in(gemm, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), {});
  std::ofstream(bad_dir / "cut.pb", std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  std::ofstream(bad_dir / "json.pb", std::ios::binary) << "{\"traceEvents\": []}";
  std::string dir = run_dir("multihost_bad", {{"a", gemm},
                                              {"b", (bad_dir / "cut.pb").string()},
                                              {"c", gemm},
                                              {"d", (bad_dir / "json.pb").string()}});
  std::string want = (fs::path(dir) / "plugins/profile/run/b.xplane.pb").string();
  for (unsigned threads : {1u, 2u, 4u}) {
    try {
      load(dir, threads);
      FAIL() << "loaded a run with bad files";
    } catch (const InputError& e) {
      EXPECT_EQ(e.file(), want) << threads;
      EXPECT_FALSE(e.reason().empty());
    }
  }
}

}  // namespace
}  // namespace jaxprof
