// merge_flame_devices on the project's 8-device CPU capture and the 4-chip TPU profile: the merged
// tree weighs what the devices weighed together, each stack below the devices weighs the sum of
// its weights on every device, and frames are merged, not repeated.
#include "jaxprof/analysis/flame/flame_merge.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "jaxprof/formats/load.h"
#include "test_paths.h"

namespace jaxprof {
namespace {

// Stack below `skip` levels (joined with ';') -> self weight, over the whole tree.
std::map<std::string, int64_t> stacks(const FlameTree& t, size_t skip) {
  std::map<std::string, int64_t> out;
  for (uint32_t n = 1; n < t.nodes.size(); ++n) {
    if (t.nodes[n].self_ps == 0) continue;
    std::vector<std::string_view> s = t.stack(n);
    std::string key;
    for (size_t i = skip; i < s.size(); ++i) key += std::string(s[i]) + ";";
    out[key] += t.nodes[n].self_ps;
  }
  return out;
}

void check_merged(const std::string& path, FlameBy by) {
  LoadedProfile lp;
  load_profile({path}, {}, lp);
  FlameOptions o;
  o.by = by;
  o.idle = false;
  FlameTree t = compute_flame(lp.profile, o);
  ASSERT_GT(t.devices.size(), 1u);
  FlameTree m = merge_flame_devices(t, "all devices");
  EXPECT_EQ(m.nodes[0].name, "all devices");
  EXPECT_EQ(m.nodes[0].total_ps, t.nodes[0].total_ps);
  EXPECT_EQ(m.devices.size(), t.devices.size());
  EXPECT_EQ(stacks(m, 0), stacks(t, 1));  // the device frame dropped, weights summed
  for (const FlameNode& n : m.nodes) {
    int64_t sum = n.self_ps;
    std::set<std::pair<int, std::string>> names;
    for (uint32_t c : n.children) {
      sum += m.nodes[c].total_ps;
      EXPECT_TRUE(names.insert({static_cast<int>(m.nodes[c].kind), m.nodes[c].name}).second)
          << "repeated frame " << m.nodes[c].name;
      EXPECT_EQ(m.nodes[c].depth, n.depth + 1);
    }
    EXPECT_EQ(sum, n.total_ps) << n.name;
    for (size_t i = 1; i < n.children.size(); ++i)
      EXPECT_GE(m.nodes[n.children[i - 1]].total_ps, m.nodes[n.children[i]].total_ps);
  }
  EXPECT_LT(m.nodes.size(), t.nodes.size());
}

TEST(FlameMerge, CpuEightDevices) {
  check_merged(testing::test_data("jax_cpu_8dev"), FlameBy::kSource);
  check_merged(testing::test_data("jax_cpu_8dev"), FlameBy::kOpName);
}

TEST(FlameMerge, TpuFourChips) {
  check_merged(testing::fixture("xplane/tpu_4chip_inference.xplane.pb"), FlameBy::kModule);
}

}  // namespace
}  // namespace jaxprof
