// ops on the project's own JAX captures (numbers from tests/data/README.md, derived with a
// separate decoder) and on a real GPU profile.
#include "jaxprof/analysis/ops.h"

#include <gtest/gtest.h>

#include "jaxprof/error.h"
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
  OpsResult r = compute_ops(lp.profile, {});
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

}  // namespace
}  // namespace jaxprof
