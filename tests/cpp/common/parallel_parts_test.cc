// Analyses that read a profile on several threads: the thread helpers, the guard that keeps the
// threads to reading, and results that are the same for any number of threads on real profiles.
#include "jaxprof/common/parallel_parts.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "jaxprof/analysis/steps/module_executions.h"
#include "jaxprof/analysis/summary/summary.h"
#include "jaxprof/analysis/timeline/timeline.h"
#include "jaxprof/formats/load.h"
#include "jaxprof/render/text/modules_render.h"
#include "jaxprof/render/text/summary_render.h"
#include "jaxprof/render/text/timeline_render.h"
#include "test_paths.h"

namespace jaxprof {
namespace {

using testing::fixture;
using testing::test_data;

// Sets the process-wide thread limit for one test.
class ThreadLimit {
 public:
  explicit ThreadLimit(AnalysisThreads limit) : saved_(analysis_threads.load()) {
    analysis_threads.store(limit);
  }
  ~ThreadLimit() { analysis_threads.store(saved_); }

 private:
  AnalysisThreads saved_;
};

TEST(ParallelParts, EveryItemRunsOnceOnAThreadInRange) {
  std::vector<uint64_t> costs;
  for (uint64_t i = 0; i < 200; ++i) costs.push_back((i * 7919) % 101);
  std::vector<std::atomic<int>> runs(costs.size());
  std::atomic<bool> bad_thread{false};
  for_each_parallel(costs, 4, [&](size_t i, size_t thread) {
    runs[i].fetch_add(1);
    if (thread >= 4) bad_thread = true;
  });
  for (size_t i = 0; i < runs.size(); ++i) EXPECT_EQ(runs[i].load(), 1) << i;
  EXPECT_FALSE(bad_thread);
}

TEST(ParallelParts, FirstFailingPartInPartOrderIsRethrownAfterAllRan) {
  std::atomic<int> ran{0};
  try {
    run_parts(4, [&](size_t part) {
      ran.fetch_add(1);
      if (part == 1) throw std::runtime_error("part 1");
      if (part == 3) throw std::runtime_error("part 3");
    });
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), "part 1");
  }
  EXPECT_EQ(ran.load(), 4);
}

TEST(ParallelParts, TheLowestFailingItemsErrorWhateverTheThreads) {
  std::vector<uint64_t> costs(50, 1);
  costs[40] = 100;  // started first
  for (size_t threads : {1u, 2u, 5u}) {
    std::atomic<int> ran{0};
    try {
      for_each_parallel(costs, threads, [&](size_t i, size_t) {
        ran.fetch_add(1);
        if (i == 7) throw std::runtime_error("item 7");
        if (i == 40) throw std::runtime_error("item 40");
      });
      FAIL() << "no exception";
    } catch (const std::runtime_error& e) {
      EXPECT_EQ(std::string(e.what()), "item 7") << threads << " threads";
    }
    EXPECT_EQ(ran.load(), 50);
  }
}

TEST(ParallelParts, PartsFollowTheWorkAndTheLimit) {
  {
    ThreadLimit limit({.threads = 3});
    EXPECT_EQ(parts_for(10, 100), 1u);   // too little work for a second thread
    EXPECT_EQ(parts_for(250, 100), 2u);  // one per 100 units
    EXPECT_EQ(parts_for(100000, 100), 3u);
  }
  {
    ThreadLimit limit({.threads = 3, .split_small_work = true});
    EXPECT_EQ(parts_for(1, 100), 3u);
  }
}

TEST(ReadOnlyScope, DecodingOrMemoizingInsideItFails) {
  LoadedProfile lp;
  load_profile({fixture("xplane/tf_v100_8gpu_training.xplane.pb")}, {}, lp);
  const Profile& p = lp.profile;
  uint32_t undecoded = UINT32_MAX;
  for (uint32_t li = 0; li < p.lines.size() && undecoded == UINT32_MAX; ++li)
    if (!p.lines[li].decoded) undecoded = li;
  ASSERT_NE(undecoded, UINT32_MAX) << "lines are decoded on demand";
  {
    Profile::ReadOnlyScope reading(p);
    EXPECT_THROW(p.require_lines({undecoded}), std::logic_error);
    EXPECT_THROW(p.memo<int>("read-only test", [] { return 1; }), std::logic_error);
    EXPECT_FALSE(p.lines[undecoded].decoded);
  }
  p.require_lines({undecoded});
  EXPECT_TRUE(p.lines[undecoded].decoded);
  EXPECT_EQ(p.memo<int>("read-only test", [] { return 1; }), 1);
}

// What the analyses that run on threads give, as text.
std::string analyses_text(const std::string& path) {
  LoadedProfile lp;
  load_profile({path}, {}, lp);
  std::string out;
  for (const DeviceExecutions& d : module_executions(lp.profile)) {
    out += fmt::format("{} {}\n", d.device, execution_source_name(d.source));
    for (const ModuleExecution& x : d.executions)
      out += fmt::format("{} {} {}: {}\n", x.name, x.start_ps, x.end_ps, fmt::join(x.events, " "));
  }
  out += render_timeline(compute_timeline(lp.profile), OutputFormat::kJson);
  out += render_summary(compute_summary(lp.profile, {}), OutputFormat::kJson);
  return out;
}

TEST(ParallelAnalyses, SameResultsOnOneThreadAndOnSeveral) {
  const std::vector<std::string> inputs = {
      fixture("xplane/tf_v100_8gpu_training.xplane.pb"),
      fixture("xplane/tpu_4chip_inference.xplane.pb"),
      fixture("xplane/mi300x_jax_conv.xplane.pb"),
      fixture("nsys-jax/pax_fsdp4_4proc_proc0.zip"),
      test_data("jax_cpu_8dev"),
  };
  for (const std::string& path : inputs) {
    std::string one, several;
    {
      ThreadLimit limit({.threads = 1});
      one = analyses_text(path);
    }
    for (unsigned threads : {2u, 3u, 7u}) {
      ThreadLimit limit({.threads = threads, .split_small_work = true});
      several = analyses_text(path);
      EXPECT_EQ(one, several) << path << " on " << threads << " threads";
    }
    EXPECT_GT(one.size(), 1000u) << path;
  }
}

}  // namespace
}  // namespace jaxprof
