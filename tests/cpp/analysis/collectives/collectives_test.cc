// collectives on the project's 8-device JAX capture and a real TPU profile. Expected sizes come
// from the programs' known shapes; durations from tests/data/README.md (a separate decoder).
#include "jaxprof/analysis/collectives/collectives.h"

#include <gtest/gtest.h>

#include "all_work.h"
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

const CollectiveOp* find(const CollectivesResult& r, std::string_view name) {
  for (const CollectiveOp& o : r.ops)
    if (o.name == name) return &o;
  return nullptr;
}

TEST(Collectives, Traits) {
  EXPECT_DOUBLE_EQ(collective_traits("all-reduce", 8).bus_factor, 2.0 * 7 / 8);
  EXPECT_DOUBLE_EQ(collective_traits("all-reduce", 8).size_correction, 1);
  EXPECT_DOUBLE_EQ(collective_traits("all-gather", 8).bus_factor, 7.0 / 8);
  EXPECT_DOUBLE_EQ(collective_traits("all-gather", 8).size_correction, 8);
  EXPECT_DOUBLE_EQ(collective_traits("reduce-scatter", 4).bus_factor, 3.0 / 4);
  EXPECT_DOUBLE_EQ(collective_traits("reduce-scatter", 4).size_correction, 1);
  EXPECT_DOUBLE_EQ(collective_traits("all-to-all", 2).bus_factor, 0.5);
  EXPECT_DOUBLE_EQ(collective_traits("collective-permute", 8).bus_factor, 1);
  EXPECT_DOUBLE_EQ(collective_traits("collective-broadcast", 8).bus_factor, 1);
  EXPECT_EQ(collective_base_opcode("all-gather-start"), "all-gather");
  EXPECT_EQ(collective_base_opcode("collective-permute-done"), "collective-permute");
  EXPECT_EQ(collective_base_opcode("fusion"), "");
}

TEST(Collectives, CpuMlpGradientAllReduce) {
  LoadedProfile lp = load(test_data("jax_cpu_8dev"));
  CollectivesOptions o;
  o.steady = testing::kAllWork;
  o.instances = true;
  CollectivesResult r = compute_collectives(lp.profile, o);
  ASSERT_EQ(r.ops.size(), 2u);
  const CollectiveOp* grad = find(r, "all-reduce.5");
  ASSERT_NE(grad, nullptr);
  EXPECT_EQ(grad->module, "jit_train_step");
  EXPECT_EQ(grad->opcode, "all-reduce");
  // Replica groups in the mesh-axes form: one group of the 8 devices.
  EXPECT_EQ(grad->group_size, 8);
  EXPECT_FALSE(grad->group_size_from_devices);
  // Gradients of w1 32x64, b1 64, w2 64x16, b2 16 and the f32[] loss, 4 bytes each.
  EXPECT_EQ(grad->message_bytes, 4u * (32 * 64 + 64 + 64 * 16 + 16 + 1));
  EXPECT_EQ(grad->operand_shapes, "f32[64], f32[16], f32[64,32], f32[16,64], f32[]");
  EXPECT_EQ(grad->count, 32u);
  EXPECT_EQ(grad->total_ps, 34604103000);
  EXPECT_EQ(grad->exposed_ps, grad->total_ps);  // CPU devices run one op at a time
  EXPECT_EQ(grad->instances, 4u);
  EXPECT_EQ(grad->multi_device_instances, 4u);
  EXPECT_DOUBLE_EQ(grad->algbw_gbps, 12612.0 * 32 * 1000 / 34604103000.0);
  EXPECT_DOUBLE_EQ(grad->busbw_gbps, grad->algbw_gbps * 1.75);

  const CollectiveOp* psum = find(r, "psum_invariant.7");
  ASSERT_NE(psum, nullptr);
  EXPECT_EQ(psum->message_bytes, 4u);
  EXPECT_EQ(psum->group_size, 8);
  EXPECT_EQ(psum->total_ps, 8635646000);

  ASSERT_EQ(r.devices.size(), 8u);
  uint64_t late = 0;
  for (const CollectiveDevice& d : r.devices) {
    EXPECT_EQ(d.executions, 8u);
    late += d.late_count;
  }
  EXPECT_EQ(late, 8u);
  EXPECT_EQ(r.multi_device_instances, 8u);
  ASSERT_EQ(r.instances.size(), 8u);
  for (const CollectiveInstance& i : r.instances) {
    EXPECT_EQ(i.devices, 8u);
    EXPECT_TRUE(i.has_run_id);
    EXPECT_EQ(i.wait_ps, i.last_end_ps - i.first_start_ps - i.fastest_ps);
  }
  ASSERT_EQ(r.sizes.size(), 2u);
  EXPECT_EQ(r.sizes[0].message_bytes, 12612u);
}

TEST(Collectives, TpuPsumWithIotaReplicaGroups) {
  LoadedProfile lp = load(fixture("xplane/tpu_4chip_inference.xplane.pb"));
  CollectivesResult r = compute_collectives(lp.profile, {.steady = testing::kAllWork});
  ASSERT_EQ(r.ops.size(), 1u);
  const CollectiveOp& op = r.ops[0];
  EXPECT_EQ(op.module, "jit__psum");
  EXPECT_EQ(op.opcode, "all-reduce");
  EXPECT_EQ(op.group_size, 2);                                // {0,4},{1,5},{2,6},{3,7}
  EXPECT_EQ(op.message_bytes, 4ull * 5 * 1024 * 1024 * 256);  // f32[5,1024,1024,256]
  EXPECT_EQ(op.count, 12u);                                   // 3 runs on each of 4 chips
  EXPECT_DOUBLE_EQ(op.traits.bus_factor, 1.0);
  // Each chip's partner (4..7) is not in this profile: every instance has one device.
  EXPECT_EQ(op.multi_device_instances, 0u);
  EXPECT_EQ(op.wait_total_ps, 0);
  EXPECT_DOUBLE_EQ(op.algbw_gbps, 5368709120.0 * 12 * 1000 / static_cast<double>(op.total_ps));
}

TEST(Collectives, DeviceFilterAndNoCollectives) {
  LoadedProfile lp = load(test_data("jax_cpu_8dev"));
  CollectivesOptions o;
  o.steady = testing::kAllWork;
  o.filter.device = "re:CPU:[01]$";
  CollectivesResult r = compute_collectives(lp.profile, o);
  EXPECT_EQ(r.devices.size(), 2u);
  for (const CollectiveOp& op : r.ops) EXPECT_EQ(op.count, 8u);
  LoadedProfile gpu = load(fixture("xplane/mi300x_jax_gemm.xplane.pb"));
  EXPECT_TRUE(compute_collectives(gpu.profile, {.steady = testing::kAllWork}).ops.empty());
}

}  // namespace
}  // namespace jaxprof
