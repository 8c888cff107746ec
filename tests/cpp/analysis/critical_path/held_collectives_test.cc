// Which participant held each collective (the last to arrive, and what it waited for), on a graph
// built by hand across two hosts; and the digest summary and the report show: the median steady
// step, the same whether the profile's every step is followed or only that one.
#include "jaxprof/analysis/critical_path/held_collectives.h"

#include <gtest/gtest.h>

#include "graph_node_builder.h"
#include "jaxprof/analysis/critical_path/critical_path_digest.h"
#include "jaxprof/formats/load.h"
#include "test_paths.h"

namespace jaxprof {
namespace {

// Three devices on two hosts meet at an all-reduce, then two of them at an all-gather. Host 1's
// device is last at the first (after its op "slow"); at the second, host 0's device 1 is last,
// its wait after the all-reduce kept as a device gap.
TEST(HeldCollectives, TheLastArrivalHoldsTheOthers) {
  StepWork w;
  w.start_ps = 0;
  w.end_ps = 200;
  w.devices = w.lanes = {"d0", "d1", "d2"};
  w.nodes = {graph_node("fast", 0, 0, NodeKind::kOp, 0, 20),
             graph_node("mid", 1, 0, NodeKind::kOp, 0, 30),
             graph_node("slow", 2, 1, NodeKind::kOp, 0, 70),
             graph_node("ar", 0, 0, NodeKind::kCollective, 20, 90),
             graph_node("ar", 1, 0, NodeKind::kCollective, 30, 90),
             graph_node("ar", 2, 1, NodeKind::kCollective, 70, 90),
             graph_node("ag", 0, 0, NodeKind::kCollective, 95, 150),
             graph_node("ag", 1, 0, NodeKind::kCollective, 120, 150),
             graph_node("solo", 2, 1, NodeKind::kCollective, 95, 150)};
  w.instance = {UINT32_MAX, UINT32_MAX, UINT32_MAX, 0, 0, 0, 1, 1, 2};
  w.instances = 3;
  w.execution_start = {1, 1, 1, 0, 0, 0, 0, 0, 0};
  // Lanes hold their nodes by start: d0, d1, d2 in turn.
  const StepGraph g = build_step_graph(w);
  const std::vector<HeldCollective> held = held_collectives(g, {"hostA", "hostB"});
  ASSERT_EQ(held.size(), 2u) << "an instance of one participant is an op like the others";
  EXPECT_EQ(held[0].name, "ar");
  EXPECT_EQ(held[0].participants, 3u);
  EXPECT_EQ(held[0].hosts, 2u);
  EXPECT_EQ(held[0].host, "hostB");
  EXPECT_EQ(held[0].device, "d2");
  EXPECT_EQ(held[0].after, "slow");
  EXPECT_EQ(held[0].after_kind, "op");
  EXPECT_EQ(held[0].arrival_ps, 70);
  EXPECT_EQ(held[0].spread_ps, 50);
  EXPECT_EQ(held[1].name, "ag");
  EXPECT_EQ(held[1].hosts, 1u);
  EXPECT_EQ(held[1].host, "hostA");
  EXPECT_EQ(held[1].device, "d1");
  EXPECT_EQ(held[1].after, "ar");
  EXPECT_EQ(held[1].after_kind, "collective");
  EXPECT_EQ(held[1].spread_ps, 25);

  // The all-reduce had a fourth participant in another step's window: not known who held it.
  w.instance_members = {4, 2, 1};
  size_t partial = 0;
  const std::vector<HeldCollective> known =
      held_collectives(build_step_graph(w), {"hostA", "hostB"}, &partial);
  ASSERT_EQ(known.size(), 1u);
  EXPECT_EQ(known[0].name, "ag");
  EXPECT_EQ(partial, 1u);
}

TEST(CriticalPathDigest, MedianSteadyStepFollowedAloneEqualsTheWholeResult) {
  LoadedProfile lp;
  load_profile({testing::test_data("jax_cpu_8dev")}, {}, lp);
  CriticalPathOptions o;
  o.rank = false;
  const CriticalPathResult all = compute_critical_path(lp.profile, o);
  const CriticalPathDigest whole = digest_critical_path(all, 3);
  const CriticalPathDigest alone = digest_critical_path(lp.profile, 3);
  ASSERT_TRUE(whole.available()) << whole.unavailable;
  ASSERT_TRUE(alone.available()) << alone.unavailable;
  // The median of the steady steps by their marked duration, the lower of an even count.
  std::vector<int64_t> steady;
  for (const CriticalStep& s : all.steps)
    if (!s.warmup) steady.push_back(s.marked_ps);
  ASSERT_FALSE(steady.empty());
  std::sort(steady.begin(), steady.end());
  EXPECT_EQ(whole.step.marked_ps, steady[(steady.size() - 1) / 2]);
  EXPECT_EQ(whole.counted, steady.size());
  EXPECT_EQ(whole.steps, all.steps.size());
  EXPECT_EQ(alone.step.number, whole.step.number);
  EXPECT_EQ(alone.step.step_ps, whole.step.step_ps);
  EXPECT_EQ(alone.step.critical_ps, whole.step.critical_ps);
  ASSERT_EQ(alone.step.ops.size(), 3u);
  for (size_t i = 0; i < alone.step.ops.size(); ++i) {
    EXPECT_EQ(alone.step.ops[i].name, whole.step.ops[i].name);
    EXPECT_EQ(alone.step.ops[i].on_path_ps, whole.step.ops[i].on_path_ps);
    EXPECT_EQ(alone.step.ops[i].slack_ps, whole.step.ops[i].slack_ps);
  }
  EXPECT_TRUE(alone.step.path.empty());
  EXPECT_EQ(alone.counted, whole.counted);
  EXPECT_EQ(alone.step_source, "host-annotation");
}

TEST(CriticalPathDigest, AProfileWithoutStepsHasNone) {
  LoadedProfile lp;
  load_profile({testing::fixture("xplane/mi300x_jax_gemm.xplane.pb")}, {}, lp);
  const CriticalPathDigest d = digest_critical_path(lp.profile, 3);
  EXPECT_FALSE(d.available());
  EXPECT_NE(d.unavailable.find("marks no steps"), std::string::npos) << d.unavailable;
}

}  // namespace
}  // namespace jaxprof
