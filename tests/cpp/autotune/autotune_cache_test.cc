// The autotuning cache: what goes in comes out, export/import is lossless, a second write to a
// key replaces the first, and bad input is rejected without touching the database.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "jaxprof/autotune/cache.h"
#include "jaxprof/common/error.h"

namespace jaxprof {
namespace {

std::string temp_db(const char* name) {
  auto dir =
      std::filesystem::temp_directory_path() / ("jaxprof_cache_test_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  auto path = dir / name;
  std::filesystem::remove(path);
  return path.string();
}

CacheEntry entry(std::string call_key, std::string config, double median) {
  CacheEntry e;
  e.key = {"cpu|jax-0.10.2", "matmul@v2", std::move(call_key)};
  e.config = std::move(config);
  e.samples_ns = {median - 1, median, median + 2.5};
  e.median_ns = median;
  e.mad_ns = 1;
  e.ci_low_ns = median - 1;
  e.ci_high_ns = median + 2.5;
  return e;
}

TEST(AutotuneCache, RoundTrip) {
  std::string path = temp_db("round_trip.sqlite");
  {
    AutotuneCache cache(path);
    cache.put(entry("f32[128,128]", R"({"block": 64, "stages": 2})", 1000));
  }
  AutotuneCache cache(path);  // reopened: persisted
  auto got = cache.get({"cpu|jax-0.10.2", "matmul@v2", "f32[128,128]"});
  ASSERT_TRUE(got);
  EXPECT_EQ(got->config, R"({"block": 64, "stages": 2})");
  EXPECT_EQ(got->samples_ns, (std::vector<double>{999, 1000, 1002.5}));
  EXPECT_EQ(got->median_ns, 1000);
  EXPECT_EQ(got->ci_high_ns, 1002.5);
  EXPECT_FALSE(got->measured_at.empty());  // filled in on put
  EXPECT_FALSE(cache.get({"cpu|jax-0.10.2", "matmul@v2", "other"}));
}

TEST(AutotuneCache, ConflictUpdatesInPlace) {
  AutotuneCache cache(temp_db("conflict.sqlite"));
  cache.put(entry("k", R"({"block": 32})", 2000));
  cache.put(entry("k", R"({"block": 128})", 500));
  auto all = cache.list();
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].config, R"({"block": 128})");
  EXPECT_EQ(all[0].median_ns, 500);
}

TEST(AutotuneCache, ExportImportAndClear) {
  AutotuneCache a(temp_db("export.sqlite"));
  CacheEntry e1 = entry("a", R"({"block": [16, 32], "name": "q\"x"})", 10);
  e1.host = "node-7";
  e1.measured_at = "2026-01-02T03:04:05Z";
  a.put({e1, entry("b", "7", 20)});
  std::string json = cache_to_json(a.list());
  AutotuneCache b(temp_db("import.sqlite"));
  b.put(cache_from_json(json));
  auto got = b.list();
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].key.call_key, "a");
  EXPECT_EQ(got[0].config, R"({"block":[16,32],"name":"q\"x"})");  // minified
  EXPECT_EQ(got[0].host, "node-7");
  EXPECT_EQ(got[0].measured_at, "2026-01-02T03:04:05Z");
  EXPECT_EQ(got[1].samples_ns,
            e1.samples_ns.size() ? entry("b", "7", 20).samples_ns : std::vector<double>{});
  EXPECT_EQ(cache_to_json(b.list()), cache_to_json(cache_from_json(cache_to_json(b.list()))));
  EXPECT_EQ(b.list("", "nomatch").size(), 0u);
  EXPECT_EQ(b.clear("", "matmul"), 2u);
  EXPECT_TRUE(b.list().empty());
}

TEST(AutotuneCache, RejectsBadInput) {
  AutotuneCache cache(temp_db("bad.sqlite"));
  EXPECT_THROW(cache.put(entry("k", "{not json", 1)), InputError);
  EXPECT_TRUE(cache.list().empty());
  EXPECT_THROW(cache_from_json("[1, 2]"), InputError);
  EXPECT_THROW(cache_from_json(R"({"entries": [{"device": "d"}]})"), InputError);
}

}  // namespace
}  // namespace jaxprof
