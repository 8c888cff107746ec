// critical-path on real profiles (GPU and TPU xplane, nsys-jax, the CPU captures): the path's
// segments tile each step (their total is the step time), each is an event or a named gap, no
// op has negative slack, and a replay with nothing changed gives back the measured step. A small
// graph built by hand checks the collective barrier and the what-if arithmetic.
#include "jaxprof/analysis/critical_path/critical_path.h"

#include <gtest/gtest.h>

#include <set>

#include "graph_node_builder.h"
#include "jaxprof/common/error.h"
#include "jaxprof/formats/load.h"
#include "test_paths.h"

namespace jaxprof {
namespace {

CriticalPathResult critical_path_of(const std::string& path, std::vector<std::string> specs = {}) {
  LoadedProfile lp;
  load_profile({path}, {}, lp);
  CriticalPathOptions o;
  for (const std::string& s : specs) o.what_ifs.push_back(parse_what_if(s));
  return compute_critical_path(lp.profile, o);
}

void expect_path_tiles_steps(const CriticalPathResult& r) {
  static const std::set<std::string, std::less<>> kKinds = {"op", "collective", "host", "gap"};
  static const std::set<std::string, std::less<>> kGaps = {
      "device/idle", "host/launch", "host/idle", "host/step-start", "host/step-end"};
  ASSERT_FALSE(r.steps.empty());
  for (const CriticalStep& s : r.steps) {
    int64_t total = 0, at = s.start_ps;
    for (const PathSegment& seg : s.path) {
      EXPECT_GT(seg.duration_ps, 0);
      EXPECT_EQ(seg.start_ps, at) << "segments follow one another";
      at = seg.start_ps + seg.duration_ps;
      total += seg.duration_ps;
      EXPECT_TRUE(kKinds.count(seg.kind)) << seg.kind;
      if (seg.kind == "gap") {
        EXPECT_TRUE(kGaps.count(seg.name)) << seg.name;
      }
    }
    EXPECT_EQ(total, s.step_ps) << "step " << s.number;
    for (const PathOp& op : s.ops) {
      EXPECT_GE(op.slack_ps, 0) << op.name;
      EXPECT_LE(op.on_path_ps, op.total_ps) << op.name;
    }
    ASSERT_EQ(s.predictions.size(), 1u);
    EXPECT_EQ(s.predictions[0].predicted_ps, s.step_ps) << "a replay of the measured graph";
  }
}

TEST(CriticalPath, FixturesPathTilesTheStep) {
  for (const char* f :
       {"xplane/mi300x_jax_gemm.xplane.pb", "xplane/mi300x_jax_conv.xplane.pb",
        "xplane/tf_v100_8gpu_training.xplane.pb", "xplane/tpu_4chip_inference.xplane.pb",
        "nsys-jax/pax_fsdp4_4proc_proc0.zip"}) {
    SCOPED_TRACE(f);
    expect_path_tiles_steps(critical_path_of(testing::fixture(f), {"op=.:1"}));
  }
}

TEST(CriticalPath, CpuCaptureStepsAndHostWork) {
  const CriticalPathResult r = critical_path_of(testing::test_data("jax_cpu_8dev"), {"op=.:1"});
  expect_path_tiles_steps(r);
  EXPECT_EQ(r.step_source, "host-annotation");
  ASSERT_EQ(r.steps.size(), 4u);
  bool host = false, collective = false;
  for (const PathSegment& seg : r.steps[3].path) {
    host = host || seg.kind == "host";
    collective = collective || seg.kind == "collective";
  }
  EXPECT_TRUE(host);
  EXPECT_TRUE(collective);
}

TEST(CriticalPath, WhatIfsMoveTheStepTheWayTheySay) {
  const CriticalPathResult r = critical_path_of(testing::test_data("jax_cpu_8dev"),
                                                {"category=collective:0", "collectives=overlapped",
                                                 "launches=free", "op=.:2", "category=host:0"});
  for (const CriticalStep& s : r.steps) {
    for (size_t k = 0; k < s.predictions.size(); ++k) {
      if (k == 3) {
        EXPECT_GE(s.predictions[k].predicted_ps, s.step_ps);
      } else {
        EXPECT_LE(s.predictions[k].predicted_ps, s.step_ps) << s.predictions[k].spec;
      }
    }
    // Overlapped collectives also drop the barrier: never slower than free transfers alone.
    EXPECT_LE(s.predictions[1].predicted_ps, s.predictions[0].predicted_ps);
  }
  ASSERT_EQ(r.combined.size(), 1u);
  EXPECT_LE(r.ranked.size(), 5u);
  for (size_t i = 1; i < r.ranked.size(); ++i)
    EXPECT_LE(r.ranked[i - 1].change_ps, r.ranked[i].change_ps);
}

// The ranking skips the replays of candidates whose bound says they cannot be among the best:
// its five are the first five of the ranking where every candidate replays.
TEST(CriticalPath, RankingWithSkippedReplaysKeepsTheBest) {
  for (const std::string& path : {testing::test_data("jax_cpu_8dev"),
                                  testing::fixture("xplane/tpu_4chip_inference.xplane.pb"),
                                  testing::fixture("nsys-jax/pax_fsdp4_4proc_proc0.zip")}) {
    SCOPED_TRACE(path);
    LoadedProfile lp;
    load_profile({path}, {}, lp);
    CriticalPathOptions five, all;
    all.ranked = 1000;
    const CriticalPathResult a = compute_critical_path(lp.profile, five);
    const CriticalPathResult b = compute_critical_path(lp.profile, all);
    ASSERT_LE(a.ranked.size(), 5u);
    ASSERT_GE(b.ranked.size(), a.ranked.size());
    for (size_t i = 0; i < a.ranked.size(); ++i) {
      EXPECT_EQ(a.ranked[i].spec, b.ranked[i].spec);
      EXPECT_EQ(a.ranked[i].change_ps, b.ranked[i].change_ps);
    }
  }
}

TEST(CriticalPath, BadSpecsAreInputErrors) {
  for (const char* s : {"op=x", "op=(:0.5", "op=x:-1", "category=nope:0.5", "host=h:max",
                        "collectives=yes", "launches=cheap", "nothing"})
    EXPECT_THROW(parse_what_if(s), InputError) << s;
  EXPECT_EQ(parse_what_if("category=elementwise:0.5").target, "elementwise/fusion");
}

// Two devices meet at an all-reduce; device 1 arrives late, so its op before the collective sets
// the step, and halving it gains exactly the difference in arrivals while device 0's op has slack.
TEST(CriticalPath, CollectiveWaitsForTheLastArrival) {
  StepWork w;
  w.start_ps = 0;
  w.end_ps = 100;
  w.devices = {"d0", "d1"};
  w.lanes = {"d0", "d1"};
  auto node = [](std::string_view name, uint32_t lane, NodeKind kind, int64_t s, int64_t e) {
    return graph_node(name, lane, /*host=*/0, kind, s, e);
  };
  w.nodes = {node("a", 0, NodeKind::kOp, 0, 20), node("b", 1, NodeKind::kOp, 0, 60),
             node("ar", 0, NodeKind::kCollective, 20, 90),
             node("ar", 1, NodeKind::kCollective, 60, 90)};
  w.instance = {UINT32_MAX, UINT32_MAX, 0, 0};
  w.instances = 1;
  w.execution_start = {1, 1, 0, 0};
  const StepGraph g = build_step_graph(w);
  EXPECT_EQ(g.time_ps[g.end_vertex()], 100);
  EXPECT_EQ(replay_what_if(g, {parse_what_if("op=^b$:0.5")}, {}), 70);
  EXPECT_EQ(replay_what_if(g, {parse_what_if("op=^a$:0.5")}, {}), 100);
  EXPECT_EQ(replay_what_if(g, {parse_what_if("category=collective:0")}, {}), 70);
  EXPECT_EQ(replay_what_if(g, {parse_what_if("collectives=overlapped")}, {}), 70);
  EXPECT_EQ(replay_what_if(g, {parse_what_if("op=^b$:0.5"), parse_what_if("op=^ar$:0")}, {}), 40);
  // What the ranking may skip a replay by: what the measured path's edges lose bounds the gain.
  EXPECT_EQ(what_if_gain_bound(g, binding_path(g), {parse_what_if("op=^b$:0.5")}, {}),
            30);  // gains 30
  EXPECT_EQ(what_if_gain_bound(g, binding_path(g), {parse_what_if("op=^a$:0.5")}, {}),
            0);  // off the path
  EXPECT_EQ(what_if_gain_bound(g, binding_path(g), {parse_what_if("category=collective:0")}, {}),
            30);
  EXPECT_EQ(what_if_gain_bound(g, binding_path(g), {parse_what_if("collectives=overlapped")}, {}),
            std::nullopt);
  EXPECT_EQ(what_if_gain_bound(g, binding_path(g), {parse_what_if("launches=free")}, {}),
            std::nullopt);
}

}  // namespace
}  // namespace jaxprof

namespace jaxprof {
namespace {

// A GPU stream whose second kernel was launched late: the launch holds it, so halving the first
// kernel gains nothing, and free launches let it follow the first at once.
TEST(CriticalPath, KernelsWaitForTheirLaunch) {
  StepWork w;
  w.start_ps = 0;
  w.end_ps = 100;
  w.devices = {"gpu"};
  w.lanes = {"gpu/stream"};
  GraphNode a, b;
  a.name = "a";
  b.name = "b";
  a.category = b.category = "gemm";
  a.start_ps = 0, a.end_ps = 20, a.launch_ps = 0;
  b.start_ps = 60, b.end_ps = 90, b.launch_ps = 50;
  w.nodes = {a, b};
  w.instance = {UINT32_MAX, UINT32_MAX};
  w.execution_start = {1, 0};
  const StepGraph g = build_step_graph(w);
  EXPECT_EQ(g.time_ps[g.end_vertex()], 100);
  EXPECT_EQ(replay_what_if(g, {parse_what_if("op=^a$:0.5")}, {}), 100);
  EXPECT_EQ(replay_what_if(g, {parse_what_if("op=^b$:0.5")}, {}), 85);
  EXPECT_EQ(replay_what_if(g, {parse_what_if("launches=free")}, {}), 60);
}

}  // namespace
}  // namespace jaxprof

namespace jaxprof {
namespace {

// A host event H spans its device's op `a` and launches `c` when it returns: as measured H's own
// time holds the step, and `a` (which ends inside H) is off the path; in a replay H waits for `a`
// (its host span), so halving `a` ends H, and with it the step, sooner.
TEST(CriticalPath, HostEventsWaitForTheDeviceOpsTheySpan) {
  StepWork w;
  w.start_ps = 0;
  w.end_ps = 100;
  w.devices = {"d0"};
  w.lanes = {"d0", "host"};
  auto node = [](std::string_view name, uint32_t lane, NodeKind kind, int64_t s, int64_t e) {
    GraphNode n;
    n.name = name;
    n.category = kind == NodeKind::kHost ? "host" : "gemm";
    n.lane = lane;
    n.device = kind == NodeKind::kHost ? UINT32_MAX : 0;
    n.kind = kind;
    n.start_ps = s;
    n.end_ps = e;
    return n;
  };
  w.nodes = {node("H", 1, NodeKind::kHost, 0, 80), node("a", 0, NodeKind::kOp, 10, 60),
             node("c", 0, NodeKind::kOp, 82, 98)};
  w.instance = {UINT32_MAX, UINT32_MAX, UINT32_MAX};
  w.execution_start = {0, 1, 1};
  const StepGraph g = build_step_graph(w);
  ASSERT_EQ(g.span_tails.size(), 1u);
  EXPECT_EQ(g.span_tails[0], (std::pair<uint32_t, int64_t>{0, 20}));
  EXPECT_EQ(replay_what_if(g, {parse_what_if("op=^nothing$:1")}, {}), 100);
  EXPECT_EQ(replay_what_if(g, {parse_what_if("op=^a$:0.5")}, {}), 75);
  EXPECT_EQ(replay_what_if(g, {parse_what_if("op=^a$:2")}, {}), 150);
  // The path as measured: H's own time, its launch of c, c, the step's tail.
  std::vector<EdgeKind> kinds;
  for (uint32_t i : binding_path(g)) kinds.push_back(g.edges[i].kind);
  EXPECT_EQ(kinds, (std::vector<EdgeKind>{EdgeKind::kStepEndGap, EdgeKind::kDuration,
                                          EdgeKind::kLaunchGap, EdgeKind::kDuration}));
  const std::optional<int64_t> bound =
      what_if_gain_bound(g, binding_path(g), {parse_what_if("op=^a$:0.5")}, {});
  ASSERT_TRUE(bound);
  EXPECT_GE(*bound, 25);
}

}  // namespace
}  // namespace jaxprof

namespace jaxprof {
namespace {

// Two vertices at one time bound by each other through edges of no weight (two hosts' waits at
// one instant): the walk back from the end does not go round them forever, it takes the other
// edge that binds as well and reaches the source.
TEST(CriticalPath, TheWalkNeverComesBackToAVertex) {
  StepGraph g;
  g.time_ps = {0, 5, 5, 5};
  auto edge = [](uint32_t from, uint32_t to, int64_t w) {
    GraphEdge e;
    e.from = from;
    e.to = to;
    e.weight_ps = w;
    return e;
  };
  // By target: 1 <- 2 and 1 <- 0; 2 <- 1; the end, 3 <- 2.
  g.edges = {edge(2, 1, 0), edge(0, 1, 5), edge(1, 2, 0), edge(2, 3, 0)};
  g.first_in = {0, 0, 2, 3, 4};
  const std::vector<uint32_t> path = binding_path(g);
  ASSERT_EQ(path.size(), 3u);
  EXPECT_EQ(g.edges[path[0]].from, 2u);
  EXPECT_EQ(g.edges[path[1]].from, 1u);
  EXPECT_EQ(g.edges[path[2]].from, 0u);
}

}  // namespace
}  // namespace jaxprof

namespace jaxprof {
namespace {

// Two hosts meet at an all-reduce; host 1's clock runs 50 ahead, so as measured it seems to
// arrive last (60 against 20) though host 0 did (20 against 10 on one clock). The instance ends
// at one instant on both (90 and 140 on their clocks): replays meet on the common clock that
// gives, so halving host 0's op before the collective gains 10, where the measured barrier (at
// host 1's 60) would have held it.
TEST(CriticalPath, ReplaysMeetOnTheHostsCommonClock) {
  StepWork w;
  w.start_ps = 0;
  w.end_ps = 100;
  w.devices = w.lanes = {"d0", "d1"};
  w.nodes = {graph_node("a", 0, 0, NodeKind::kOp, 0, 20),
             graph_node("b", 1, 1, NodeKind::kOp, 50, 60),
             graph_node("ar", 0, 0, NodeKind::kCollective, 20, 90),
             graph_node("ar", 1, 1, NodeKind::kCollective, 60, 140)};
  w.instance = {UINT32_MAX, UINT32_MAX, 0, 0};
  w.instances = 1;
  w.execution_start = {1, 1, 0, 0};
  const StepGraph g = build_step_graph(w);
  ASSERT_EQ(g.host_offset.size(), 2u);
  EXPECT_EQ(g.host_offset[1] - g.host_offset[0], 50);
  EXPECT_EQ(g.time_ps[g.end_vertex()], 140);
  EXPECT_EQ(replay_what_if(g, {parse_what_if("op=^nothing$:1")}, {}), 140);
  EXPECT_EQ(replay_what_if(g, {parse_what_if("op=^a$:0.5")}, {}), 130);
  EXPECT_EQ(replay_what_if(g, {parse_what_if("op=^b$:0.5")}, {}), 140);
  const std::optional<int64_t> bound =
      what_if_gain_bound(g, binding_path(g), {parse_what_if("op=^a$:0.5")}, {});
  ASSERT_TRUE(bound);
  EXPECT_GE(*bound, 10);
}

// A participant that starts after the step (merged steps of several hosts cut an instance): as
// measured the instance's transfer runs from the last arrival in the step (20), so the wait for
// the later one is part of it; a replay counts that participant, arriving as long after its
// lane's last op in the step as measured, and the transfer from it: halving that op gains.
TEST(CriticalPath, ReplaysCountParticipantsAfterTheStep) {
  StepWork w;
  w.start_ps = 0;
  w.end_ps = 100;
  w.devices = w.lanes = {"d0", "d1", "d2"};
  // ar on d1 starts after the step (at 70): only its arrival is known, from the whole profile.
  w.nodes = {graph_node("b", 1, 0, NodeKind::kOp, 0, 30),
             graph_node("ar", 2, 0, NodeKind::kCollective, 10, 90),
             graph_node("ar", 0, 0, NodeKind::kCollective, 20, 90)};
  w.instance = {UINT32_MAX, 0, 0};
  w.instances = 1;
  w.instance_members = {3};
  w.outside = {{0, 1, 70}};
  w.execution_start = {1, 1, 1};
  const StepGraph g = build_step_graph(w);
  EXPECT_EQ(g.outside_edges, 1u);
  EXPECT_EQ(g.time_ps[g.end_vertex()], 100);
  EXPECT_EQ(replay_what_if(g, {parse_what_if("op=^nothing$:1")}, {}), 100);
  EXPECT_EQ(replay_what_if(g, {parse_what_if("op=^b$:0.5")}, {}), 85);
  // As measured the participant after the step is no edge of the path.
  for (uint32_t i : binding_path(g)) EXPECT_NE(g.edges[i].kind, EdgeKind::kOutside);
}

}  // namespace
}  // namespace jaxprof
