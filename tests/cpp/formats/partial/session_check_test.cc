// What discovery says it found, the directories it refuses, and when host files cannot be one
// capture's hosts.
#include "jaxprof/formats/partial/session_check.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "jaxprof/common/error.h"
#include "jaxprof/io/discover.h"
#include "jaxprof/render/text/input_render.h"

namespace jaxprof {
namespace {

namespace fs = std::filesystem;

fs::path fresh_dir(const std::string& name) {
  fs::path dir = fs::path(::testing::TempDir()) / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

void touch(const fs::path& file) {
  fs::create_directories(file.parent_path());
  std::ofstream(file) << "x";
}

TEST(Discover, LogDirectorySaysWhichSessionAndWhetherItWasPickedByDefault) {
  fs::path logs = fresh_dir("discover_logs");
  touch(logs / "plugins/profile/2025_01_01_10_00_00/a.xplane.pb");
  touch(logs / "plugins/profile/2025_01_02_10_00_00/a.xplane.pb");
  touch(logs / "plugins/profile/2025_01_02_10_00_00/b.xplane.pb");
  ProfileFiles f = discover_profile(logs.string(), {});
  EXPECT_EQ(f.layout, ProfileLayout::kLogDir);
  EXPECT_EQ(f.session, "2025_01_02_10_00_00");
  EXPECT_TRUE(f.newest_by_default);
  EXPECT_EQ(f.sessions.size(), 2u);
  ASSERT_EQ(f.hosts.size(), 2u);
  EXPECT_EQ(f.session_dir, (logs / "plugins/profile/2025_01_02_10_00_00").string());
  ProfileFiles old = discover_profile(logs.string(), {.session = "2025_01_01_10_00_00"});
  EXPECT_FALSE(old.newest_by_default);
  EXPECT_EQ(old.hosts.size(), 1u);
  // Sessions copied out of their log directory are still sessions by their names.
  ProfileFiles copied = discover_profile((logs / "plugins/profile").string(), {});
  EXPECT_EQ(copied.session, "2025_01_02_10_00_00");
  EXPECT_TRUE(is_session_name("2025_01_02_10_00_00"));
  EXPECT_FALSE(is_session_name("xplane"));
}

TEST(Discover, SubdirectoriesThatAreNotSessionsAreListedNotGuessed) {
  fs::path dir = fresh_dir("discover_runs");
  touch(dir / "run_a/vm.xplane.pb");
  touch(dir / "run_b/vm.xplane.pb");
  touch(dir / "run_b/vm2.xplane.pb");
  try {
    discover_profile(dir.string(), {});
    FAIL() << "a folder of runs was read as a log directory";
  } catch (const InputError& e) {
    EXPECT_NE(e.reason().find("run_a (1 file), run_b (2 files)"), std::string::npos) << e.what();
    EXPECT_NE(e.reason().find("--session"), std::string::npos);
  }
  ProfileFiles picked = discover_profile(dir.string(), {.session = "run_a"});
  EXPECT_EQ(picked.session, "run_a");
  EXPECT_EQ(picked.hosts.size(), 1u);
  ProfileFiles run = discover_profile((dir / "run_b").string(), {});
  EXPECT_EQ(run.layout, ProfileLayout::kRunDir);
  EXPECT_EQ(run.hosts.size(), 2u);
}

TEST(Discover, WhatWasReadStaysOneLineForAThousandHosts) {
  ProfileFiles f;
  f.path = "/logs/plugins/profile/run";
  f.layout = ProfileLayout::kRunDir;
  f.session = "run";
  for (int i = 0; i < 1000; ++i) {
    std::string host = "host" + std::to_string(1000 + i).substr(1);
    f.hosts.push_back({host, f.path + "/" + host + ".xplane.pb"});
  }
  std::string line = render_input_line(f);
  EXPECT_LT(line.size(), 300u) << line;
  EXPECT_NE(line.find("1000 hosts host000.xplane.pb, "), std::string::npos) << line;
  EXPECT_NE(line.find("host006.xplane.pb and 993 more"), std::string::npos) << line;
  f.hosts.resize(8);  // as many as it names: all of them
  line = render_input_line(f);
  EXPECT_NE(line.find("host007.xplane.pb"), std::string::npos) << line;
  EXPECT_EQ(line.find("more"), std::string::npos) << line;
}

TEST(SessionCheck, ReasonsFilesAreNotOneCapture) {
  const int64_t t = int64_t{1'700'000'000} * 1'000'000'000;
  CaptureFacts a{"a.xplane.pb", {"host-a"}, true, false, t};
  CaptureFacts b{"b.xplane.pb", {"host-b"}, true, false, t + 2'000'000'000};
  EXPECT_TRUE(reasons_not_one_session({a, b}).empty());
  CaptureFacts same_machine = b;
  same_machine.captured_on = {"host-a"};
  auto reasons = reasons_not_one_session({a, same_machine});
  ASSERT_EQ(reasons.size(), 1u);
  EXPECT_NE(reasons[0].find("captured on machine host-a"), std::string::npos);
  CaptureFacts tpu{"t.xplane.pb", {"host-t"}, false, true, t};
  EXPECT_EQ(reasons_not_one_session({a, tpu}).size(), 1u);
  CaptureFacts later = b;
  later.start_ns = t + kMaxSessionStartSpreadNs + 1;
  reasons = reasons_not_one_session({a, later});
  ASSERT_EQ(reasons.size(), 1u);
  EXPECT_NE(reasons[0].find("began 10 min after a.xplane.pb"), std::string::npos);
  // Session-relative clocks (Chrome traces, anonymised fixtures) say nothing about start times.
  CaptureFacts relative_a = a, relative_b = b;
  relative_a.start_ns = 0;
  relative_b.start_ns = int64_t{3600} * 1'000'000'000;
  EXPECT_TRUE(reasons_not_one_session({relative_a, relative_b}).empty());
}

}  // namespace
}  // namespace jaxprof
