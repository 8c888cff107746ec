// ops on the project's own JAX captures (numbers from tests/data/README.md, derived with a
// separate decoder) and on a real GPU profile.
#include "jaxprof/analysis/ops/ops.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <tuple>

#include "all_work.h"
#include "jaxprof/common/error.h"
#include "jaxprof/formats/load.h"
#include "test_paths.h"

namespace jaxprof {
namespace {

using testing::fixture;
using testing::test_data;

LoadedProfile load(const std::string& path) {
  LoadedProfile out;
  load_profile({path}, {}, out);
  return out;
}

TEST(Ops, CpuMatmulCaptureGroupsByHloOp) {
  LoadedProfile lp = load(test_data("jax_cpu_matmul"));
  OpsResult r = compute_ops(lp.profile, {.steady = testing::kAllWork});
  ASSERT_EQ(r.devices.size(), 1u);
  const DeviceOps& d = r.devices[0];
  EXPECT_EQ(d.events, 20u);
  ASSERT_EQ(d.groups.size(), 2u);
  EXPECT_EQ(d.groups[0].name, "ynn_fusion");
  EXPECT_EQ(d.groups[0].count, 10u);
  EXPECT_EQ(d.groups[0].total_ps, 30723402000);
  EXPECT_EQ(d.groups[0].self_ps, 30723402000);  // CPU ops do not nest
  EXPECT_EQ(d.groups[0].module, "jit_two_matmuls");
  EXPECT_EQ(d.groups[0].opcode, "fusion");
  EXPECT_EQ(d.groups[0].op_name, "jit(two_matmuls)/dot_general");
  EXPECT_NE(d.groups[0].source.find("capture_cpu_profiles.py:"), std::string::npos);
  EXPECT_EQ(d.groups[1].name, "ynn_fusion.1");
  EXPECT_EQ(d.groups[1].total_ps, 4420591000);
  EXPECT_LE(d.groups[1].max_ps, d.groups[0].min_ps);  // every big matmul is slower
  // Ops never overlap on one device here: busy is the sum.
  EXPECT_EQ(d.busy_ps, 30723402000 + 4420591000);
}

TEST(Ops, CpuEightDevicesSplitByDeviceOrdinal) {
  LoadedProfile lp = load(test_data("jax_cpu_8dev"));
  OpsOptions o;
  o.steady = testing::kAllWork;
  o.group_by = GroupBy::kModule;
  OpsResult r = compute_ops(lp.profile, o);
  ASSERT_EQ(r.devices.size(), 8u);
  int64_t total = 0;
  for (size_t i = 0; i < 8; ++i) {
    EXPECT_EQ(r.devices[i].device, "/device:CPU:" + std::to_string(i));
    EXPECT_EQ(r.devices[i].events, 88u);
    double share = 0;
    for (const OpGroup& g : r.devices[i].groups) {
      total += g.total_ps;
      share += g.share;
    }
    EXPECT_NEAR(share, 1.0, 1e-9);  // ops on one device do not overlap: shares add up
  }
  EXPECT_EQ(total, 45234508000);
}

TEST(Ops, FiltersAndTop) {
  LoadedProfile lp = load(fixture("xplane/mi300x_jax_gemm.xplane.pb"));
  OpsOptions o;
  o.steady = testing::kAllWork;
  o.group_by = GroupBy::kKernel;
  OpsResult all = compute_ops(lp.profile, o);
  ASSERT_EQ(all.devices.size(), 1u);
  EXPECT_EQ(all.devices[0].events, 54u);
  EXPECT_EQ(all.devices[0].busy_ps, 3475484000);  // kernels on two streams never overlap here
  o.filter.prefix = "__amd_rocclr_copyBuffer";
  OpsResult copies = compute_ops(lp.profile, o);
  ASSERT_EQ(copies.devices[0].groups.size(), 1u);
  EXPECT_EQ(copies.devices[0].busy_ps, all.devices[0].busy_ps);  // filters never change busy
  o.filter.prefix.clear();
  o.filter.match = "^wrapped_";
  OpsResult wrapped = compute_ops(lp.profile, o);
  for (const OpGroup& g : wrapped.devices[0].groups) EXPECT_TRUE(g.name.starts_with("wrapped_"));
  o.filter.match.clear();
  o.filter.min_duration_ps = 100000000;  // 100 us
  OpsResult longish = compute_ops(lp.profile, o);
  for (const OpGroup& g : longish.devices[0].groups) EXPECT_GE(g.min_ps, 100000000);
  o.filter.min_duration_ps = 0;
  o.top = 2;
  EXPECT_EQ(compute_ops(lp.profile, o).devices[0].groups.size(), 2u);
  o.top = 0;
  o.filter.max_events = 10;
  OpsResult capped = compute_ops(lp.profile, o);
  EXPECT_EQ(capped.devices[0].selected, 10u);
  ASSERT_EQ(capped.warnings.size(), 1u);
  o.filter.max_events = 0;
  o.filter.device = "GPU:3";
  EXPECT_TRUE(compute_ops(lp.profile, o).devices.empty());
  o.filter.device = "re:GPU:[0-1]$";
  EXPECT_EQ(compute_ops(lp.profile, o).devices.size(), 1u);
  o.filter.device = "re:(";
  EXPECT_THROW(compute_ops(lp.profile, o), InputError);
}

TEST(Ops, CategoriesCoverAllTime) {
  LoadedProfile lp = load(fixture("xplane/mi300x_jax_gemm.xplane.pb"));
  OpsOptions o;
  o.steady = testing::kAllWork;
  o.group_by = GroupBy::kCategory;
  OpsResult r = compute_ops(lp.profile, o);
  int64_t total = 0;
  uint64_t count = 0;
  for (const OpGroup& g : r.devices[0].groups) {
    total += g.total_ps;
    count += g.count;
  }
  EXPECT_EQ(total, 3475484000);
  EXPECT_EQ(count, 54u);
  EXPECT_EQ(r.devices[0].groups[0].name, "gemm");  // custom-call.1 is the cuBLAS/hipBLASLt GEMM
}

// Opcode groups are unions of hlo-op groups: their sums must equal the sums of the hlo-op groups
// with that opcode (ops the HLO index does not know go to "(unknown)").
void ExpectOpcodesSumHloOps(const Profile& profile) {
  OpsOptions o;
  o.steady = testing::kAllWork;
  OpsResult ops = compute_ops(profile, o);
  o.group_by = GroupBy::kOpcode;
  OpsResult by_opcode = compute_ops(profile, o);
  ASSERT_EQ(ops.devices.size(), by_opcode.devices.size());
  for (size_t d = 0; d < ops.devices.size(); ++d) {
    std::map<std::string, std::tuple<uint64_t, int64_t, int64_t>> want;
    for (const OpGroup& g : ops.devices[d].groups) {
      auto& [count, total, self] = want[g.opcode.empty() ? kUnknownOpcode : g.opcode];
      count += g.count;
      total += g.total_ps;
      self += g.self_ps;
    }
    std::map<std::string, std::tuple<uint64_t, int64_t, int64_t>> got;
    for (const OpGroup& g : by_opcode.devices[d].groups) {
      EXPECT_EQ(g.opcode, g.name);
      // At most 1: on the TF V100 capture overlapping streams hold more self time than busy.
      EXPECT_DOUBLE_EQ(g.share, std::min(1.0, static_cast<double>(g.self_ps) /
                                                  static_cast<double>(by_opcode.devices[d].busy_ps)));
      got[g.name] = {g.count, g.total_ps, g.self_ps};
    }
    EXPECT_EQ(got, want) << ops.devices[d].device;
  }
}

TEST(Ops, OpcodeGroupsOnEightDevices) {
  LoadedProfile lp = load(test_data("jax_cpu_8dev"));
  ExpectOpcodesSumHloOps(lp.profile);
  OpsOptions o;
  o.steady = testing::kAllWork;
  o.group_by = GroupBy::kOpcode;
  OpsResult r = compute_ops(lp.profile, o);
  ASSERT_EQ(r.devices.size(), 8u);
  // tests/data/README.md: per device 2 all-reduces x 4 steps, 2 dots x 4 steps, the rest fusions.
  for (const DeviceOps& d : r.devices) {
    std::map<std::string, uint64_t> counts;
    double share = 0;
    for (const OpGroup& g : d.groups) {
      counts[g.name] = g.count;
      share += g.share;
    }
    EXPECT_EQ(counts,
              (std::map<std::string, uint64_t>{{"all-reduce", 8}, {"dot", 8}, {"fusion", 72}}));
    EXPECT_NEAR(share, 1.0, 1e-9);
  }
}

TEST(Ops, OpcodeGroupsOnFixtures) {
  for (const char* name :
       {"xplane/mi300x_jax_gemm.xplane.pb", "xplane/mi300x_jax_conv.xplane.pb",
        "xplane/tpu_4chip_inference.xplane.pb", "xplane/tf_v100_8gpu_training.xplane.pb"}) {
    SCOPED_TRACE(name);
    LoadedProfile lp = load(fixture(name));
    ExpectOpcodesSumHloOps(lp.profile);
  }
  // No HloProtos in the TensorFlow profile: every op is unknown.
  LoadedProfile tf = load(fixture("xplane/tf_v100_8gpu_training.xplane.pb"));
  OpsOptions o;
  o.steady = testing::kAllWork;
  o.group_by = GroupBy::kOpcode;
  for (const DeviceOps& d : compute_ops(tf.profile, o).devices) {
    ASSERT_EQ(d.groups.size(), 1u);
    EXPECT_EQ(d.groups[0].name, kUnknownOpcode);
  }
}

}  // namespace
}  // namespace jaxprof
