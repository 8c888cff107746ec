// Partial summaries: exact moments, files that read back byte for byte, merges in any order and
// grouping, and damaged files refused with a message rather than a crash.
#include "jaxprof/model/partial/partial.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "jaxprof/analysis/partial/extract_partials.h"
#include "jaxprof/analysis/summary/summary.h"
#include "jaxprof/common/error.h"
#include "jaxprof/formats/load.h"
#include "jaxprof/formats/partial/partial_file.h"
#include "jaxprof/model/time_range.h"
#include "test_paths.h"

namespace jaxprof {
namespace {

using testing::fixture;
using testing::test_data;

std::vector<HostPartial> partials_of(const std::string& path, const std::string& host) {
  LoadedProfile loaded;
  load_profile({path}, {}, loaded);
  std::vector<HostPartial> out = extract_partials(loaded.profile, {});
  out.front().host = host;
  return out;
}

std::string bytes_of(const PartialSet& set) {
  std::vector<const HostPartial*> all;
  for (const HostPartial& h : set.hosts()) all.push_back(&h);
  return write_partial_file(all);
}

TEST(DurationMoments, MergeInAnyGroupingGivesTheSameNumbers) {
  std::mt19937_64 rng(7);
  std::vector<int64_t> d(1000);
  for (int64_t& x : d) x = 1'000'000'000 + static_cast<int64_t>(rng() % 5000);  // 1 ms ± 5 ns
  DurationMoments all, left, right, a, b, c;
  for (int64_t x : d) all.add(x);
  for (size_t i = 0; i < d.size(); ++i) (i < 300 ? a : i < 700 ? b : c).add(d[i]);
  left = a;
  left.merge(b);
  left.merge(c);
  right = c;
  DurationMoments ab = b;
  ab.merge(a);
  right.merge(ab);
  EXPECT_EQ(left.sum, all.sum);
  EXPECT_TRUE(left.sum_sq == all.sum_sq && right.sum_sq == all.sum_sq);
  EXPECT_EQ(left.std(), all.std());
  EXPECT_EQ(right.std(), all.std());
  // Against a two-pass standard deviation: no cancellation although the mean is 1e9 ps.
  double mean = 0, ss = 0;
  for (int64_t x : d) mean += static_cast<double>(x);
  mean /= static_cast<double>(d.size());
  for (int64_t x : d) ss += (static_cast<double>(x) - mean) * (static_cast<double>(x) - mean);
  EXPECT_NEAR(all.std(), std::sqrt(ss / static_cast<double>(d.size())), 1e-6);
  EXPECT_EQ(all.min, *std::min_element(d.begin(), d.end()));
}

TEST(PartialFile, ReadsBackByteForByte) {
  for (const std::string& path :
       {test_data("jax_cpu_8dev"), fixture("xplane/tpu_4chip_inference.xplane.pb"),
        fixture("xplane/tf_v100_8gpu_training.xplane.pb")}) {
    std::vector<HostPartial> hosts = partials_of(path, "h");
    const std::string once = write_partial_file({&hosts.front()});
    std::vector<HostPartial> again = read_partial_file(once, "x.partial");
    ASSERT_EQ(again.size(), 1u);
    EXPECT_EQ(write_partial_file({&again.front()}), once) << path;
    // What the analyses give from the file is what they give from the profile.
    EXPECT_EQ(summary_from_partials(PartialSet(std::move(hosts))).device.busy_ps,
              summary_from_partials(PartialSet(std::move(again))).device.busy_ps);
  }
}

TEST(PartialFile, LongCapturesAndHostsDaysApartReadBack) {
  // A capture of three hours, and a second host whose clock zero is two days later.
  constexpr int64_t kThreeHoursPs = int64_t{3} * 3600 * 1'000'000'000'000;
  std::vector<HostPartial> hosts = partials_of(test_data("jax_cpu_8dev"), "a");
  ASSERT_FALSE(hosts.front().devices.empty());
  ASSERT_FALSE(hosts.front().devices.front().executions.empty());
  hosts.front().devices.front().executions.back().end_ps = kThreeHoursPs;
  std::vector<HostPartial> later = partials_of(test_data("jax_cpu_8dev"), "b");
  later.front().base_ns += int64_t{2} * 86'400'000'000'000;
  PartialSet set;
  EXPECT_NO_THROW(set.add(read_partial_file(write_partial_file({&hosts.front()}), "a.partial")));
  EXPECT_NO_THROW(set.add(read_partial_file(write_partial_file({&later.front()}), "b.partial")));
  // Ninety days apart is not one capture.
  later.front().base_ns += int64_t{88} * 86'400'000'000'000;
  PartialSet far;
  far.add(read_partial_file(write_partial_file({&hosts.front()}), "a.partial"));
  EXPECT_THROW(far.add(read_partial_file(write_partial_file({&later.front()}), "c.partial")),
               InputError);
}

TEST(PartialFile, TimesAsLongAsTheModelHoldsReadBack) {
  // A partial holds whatever its profile held: times up to the model's limit (kMaxTimePs, about
  // 26 days), not less; past it the file is refused as corrupt.
  std::vector<HostPartial> hosts = partials_of(test_data("jax_cpu_8dev"), "a");
  ASSERT_FALSE(hosts.front().devices.front().executions.empty());
  hosts.front().devices.front().executions.back().end_ps = kMaxTimePs;
  EXPECT_NO_THROW(read_partial_file(write_partial_file({&hosts.front()}), "a.partial"));
  hosts.front().devices.front().executions.back().end_ps = kMaxTimePs + 1;
  EXPECT_THROW(read_partial_file(write_partial_file({&hosts.front()}), "a.partial"), InputError);
}

TEST(PartialSet, MergesInAnyOrderAndGrouping) {
  std::vector<std::vector<HostPartial>> hosts;
  hosts.push_back(partials_of(test_data("jax_cpu_8dev"), "a"));
  hosts.push_back(partials_of(test_data("jax_cpu_8dev"), "b"));
  hosts.push_back(partials_of(fixture("xplane/tpu_4chip_inference.xplane.pb"), "c"));
  hosts.push_back(partials_of(fixture("xplane/mi300x_jax_gemm.xplane.pb"), "d"));
  auto copy = [&](size_t i) { return read_partial_file(write_partial_file({&hosts[i][0]}), "x"); };
  PartialSet in_order;
  for (size_t i = 0; i < hosts.size(); ++i) in_order.add(copy(i));
  PartialSet reversed;
  for (size_t i = hosts.size(); i-- > 0;) reversed.add(copy(i));
  PartialSet left, right;  // (d + b) + (c + a)
  left.add(copy(3));
  left.add(copy(1));
  right.add(copy(2));
  right.add(copy(0));
  left.merge(std::move(right));
  const std::string want = bytes_of(in_order);
  EXPECT_EQ(bytes_of(reversed), want);
  EXPECT_EQ(bytes_of(left), want);
  EXPECT_THROW(in_order.add(copy(0)), InputError);  // the same host twice
}

TEST(PartialFile, DamagedFilesAreRefusedNotCrashed) {
  std::vector<HostPartial> hosts = partials_of(test_data("jax_cpu_8dev"), "h");
  const std::string good = write_partial_file({&hosts.front()});
  EXPECT_THROW(read_partial_file("not a partial", "x.partial"), InputError);
  size_t refused = 0;
  for (size_t cut = 0; cut < good.size(); cut += 97) {
    try {
      std::vector<HostPartial> got = read_partial_file(good.substr(0, cut), "cut.partial");
      summary_from_partials(PartialSet(std::move(got)));  // what is read is usable
    } catch (const InputError& e) {
      ++refused;
      EXPECT_EQ(e.file(), "cut.partial");
    }
  }
  EXPECT_GT(refused, 0u);
  // Flipped bytes: a message, or a file that the analyses can still read.
  std::mt19937 rng(3);
  for (int i = 0; i < 300; ++i) {
    std::string bad = good;
    bad[rng() % bad.size()] ^= static_cast<char>(1 + rng() % 255);
    try {
      summary_from_partials(PartialSet(read_partial_file(bad, "bad.partial")));
    } catch (const InputError&) {
    }
  }
}

}  // namespace
}  // namespace jaxprof

namespace jaxprof {
namespace {

// A device's timeline figures are summed over the devices each on its own: four devices whose
// span, busy and idle times are each 2^60 ps (a 13-day capture) sum within 2^63 per figure, and
// the set takes them (one total of every figure refused it: 12 x 2^60); a fifth host's spans
// that would pass 2^63 are refused.
TEST(PartialSums, EachDeviceFigureHasItsOwnTotal) {
  auto host = [](const std::string& name, int devices, int64_t each) {
    HostPartial h;
    h.host = name;
    h.path = name + ".xplane.pb";
    for (int d = 0; d < devices; ++d) {
      PartialDevice& dev = h.devices.emplace_back();
      dev.name = "/device:TPU:" + std::to_string(d);
      dev.timeline.span_ps = dev.timeline.busy_ps = dev.timeline.idle_ps = each;
    }
    return h;
  };
  PartialSums sums;
  EXPECT_NO_THROW(sums.add(host("a", 4, int64_t{1} << 60)));
  EXPECT_NO_THROW(sums.add(host("b", 3, int64_t{1} << 60)));  // 7 x 2^60 per figure
  EXPECT_THROW(sums.add(host("c", 2, int64_t{1} << 60)), InputError);  // 9 x 2^60 > 2^63
}

}  // namespace
}  // namespace jaxprof
