// Helpers for the tests of damaged and hostile inputs: files written to the test's temporary
// directory, the error loading one gives, and XSpace messages built field by field.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "jaxprof/common/error.h"
#include "jaxprof/formats/load.h"

namespace jaxprof::testing {

inline std::string temp_path(const std::string& name) {
  return ::testing::TempDir() + "/hostile_" + name;
}

inline std::string write_temp_file(const std::string& name, const std::string& contents) {
  std::string path = temp_path(name);
  std::ofstream(path, std::ios::binary) << contents;
  return path;
}

inline std::string read_whole_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// What loading `paths` and decoding every line throws (nullopt: it loads), and how long it took.
struct LoadOutcome {
  std::optional<InputError> error;
  double seconds = 0;
};
inline LoadOutcome try_load(const std::vector<std::string>& paths) {
  auto t0 = std::chrono::steady_clock::now();
  LoadOutcome out;
  try {
    LoadedProfile lp;
    load_profile(paths, LoadOptions{}, lp);
    lp.profile.require_all_lines();
  } catch (const InputError& e) {
    out.error = e;
  }
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

// Loading `path` fails with an error that names it and holds every fragment.
inline void expect_refused(const std::string& path, const std::vector<std::string>& fragments) {
  LoadOutcome r = try_load({path});
  ASSERT_TRUE(r.error.has_value()) << path << " loaded";
  EXPECT_EQ(r.error->file().rfind(path, 0), 0u) << r.error->what();
  for (const std::string& f : fragments)
    EXPECT_NE(std::string(r.error->what()).find(f), std::string::npos)
        << "no '" << f << "' in: " << r.error->what();
}

// ---- XSpace messages, field by field ----

inline std::string varint(uint64_t v) {
  std::string out;
  do {
    uint8_t b = v & 0x7f;
    v >>= 7;
    out.push_back(static_cast<char>(v ? b | 0x80 : b));
  } while (v);
  return out;
}
inline std::string int_field(uint32_t number, uint64_t value) {
  return varint(uint64_t{number} << 3) + varint(value);
}
inline std::string len_field(uint32_t number, const std::string& body) {
  return varint(uint64_t{number} << 3 | 2) + varint(body.size()) + body;
}

struct TestEvent {
  int64_t offset_ps = 0;
  int64_t duration_ps = 0;
  int64_t metadata_id = 1;
};
struct TestLine {
  int64_t timestamp_ns = 0;
  std::vector<TestEvent> events;
};

// An XSpace with one GPU plane holding `lines` (line ids 1, 2, ...) and event metadata 1 ("op").
inline std::string test_xspace(const std::vector<TestLine>& lines) {
  std::string plane = int_field(1, 1) + len_field(2, "/device:GPU:0");
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string line = int_field(1, i + 1) + len_field(2, "Stream #1(Kernel)") +
                       int_field(3, static_cast<uint64_t>(lines[i].timestamp_ns));
    for (const TestEvent& e : lines[i].events)
      line += len_field(4, int_field(1, static_cast<uint64_t>(e.metadata_id)) +
                               int_field(2, static_cast<uint64_t>(e.offset_ps)) +
                               int_field(3, static_cast<uint64_t>(e.duration_ps)));
    plane += len_field(3, line);
  }
  plane += len_field(4, int_field(1, 1) + len_field(2, int_field(1, 1) + len_field(2, "op")));
  return len_field(1, plane);
}

}  // namespace jaxprof::testing
