// flame on the project's CPU captures and the shared real profiles: weights add up to the ops
// totals and the device spans exactly, source frames resolve through the stack frame index, and
// fusions are split over their fused instructions.
#include "jaxprof/analysis/flame/flame.h"

#include <gtest/gtest.h>

#include <map>

#include "all_work.h"
#include "jaxprof/analysis/timeline/busy_share.h"
#include "jaxprof/analysis/ops/ops.h"
#include "jaxprof/formats/load.h"
#include "jaxprof/render/flame/flame_folded.h"
#include "jaxprof/render/flame/flame_speedscope.h"
#include "jaxprof/render/flame/flame_svg.h"
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

// Stack (below the device frame, joined with ';') -> self weight, for one device.
std::map<std::string, int64_t> stacks(const FlameTree& t, const FlameDevice& d) {
  std::map<std::string, int64_t> out;
  for (uint32_t n = 1; n < t.nodes.size(); ++n) {
    if (t.nodes[n].self_ps == 0) continue;
    std::vector<std::string_view> s = t.stack(n);
    if (s.empty() || s[0] != t.nodes[d.node].name) continue;
    std::string key;
    for (size_t i = 1; i < s.size(); ++i) {
      if (i > 1) key += ';';
      key += s[i];
    }
    out[key] += t.nodes[n].self_ps;
  }
  return out;
}

// Totals are self plus children everywhere; device frames weigh busy + idle + set apart = span.
void check_invariants(const FlameTree& t) {
  for (const FlameNode& n : t.nodes) {
    int64_t sum = n.self_ps;
    for (uint32_t c : n.children) sum += t.nodes[c].total_ps;
    EXPECT_EQ(sum, n.total_ps) << n.name;
  }
  int64_t all = 0;
  for (const FlameDevice& d : t.devices) {
    const FlameNode& dev = t.nodes[d.node];
    EXPECT_EQ(dev.total_ps,
              d.busy_ps + d.idle_during_modules_ps + d.idle_between_modules_ps + d.set_apart_ps);
    if (d.has_idle) {
      EXPECT_EQ(dev.total_ps, d.span_ps) << d.device;
    }
    EXPECT_GE(d.idle_during_modules_ps, 0);
    EXPECT_GE(d.idle_between_modules_ps, 0);
    all += dev.total_ps;
  }
  EXPECT_EQ(t.nodes[0].total_ps, all);
}

TEST(Flame, SplitOpPathOnlyAtTopLevelSlashes) {
  using V = std::vector<std::string_view>;
  EXPECT_EQ(split_op_path("jit(train_step)/transpose/dot_general"),
            (V{"jit(train_step)", "transpose", "dot_general"}));
  EXPECT_EQ(split_op_path("jit(f)/(transpose(jvp()))/dot_general"),
            (V{"jit(f)", "(transpose(jvp()))", "dot_general"}));
  EXPECT_EQ(split_op_path("jit(f)/(a/b:c/d)/e"), (V{"jit(f)", "(a/b:c/d)", "e"}));
  EXPECT_EQ(split_op_path("pjit[name=a/b]/x"), (V{"pjit[name=a/b]", "x"}));
  EXPECT_EQ(split_op_path("/a//b/"), (V{"a", "b"}));
  EXPECT_EQ(split_op_path("a)/b(/c"), (V{"a)", "b(/c"}));  // unbalanced: later slashes inside
  EXPECT_TRUE(split_op_path("").empty());
  EXPECT_EQ(split_op_names("jit(f)/mul;jit(f)/add"), (V{"jit(f)/mul", "jit(f)/add"}));
  EXPECT_EQ(split_op_names("jit(f)/(a;b)"), (V{"jit(f)/(a;b)"}));
}

TEST(Flame, CpuMatmulOpWeightsEqualOpsTotals) {
  LoadedProfile lp = load(test_data("jax_cpu_matmul"));
  FlameOptions o;
  o.steady = testing::kAllWork;
  o.by = FlameBy::kOpName;
  o.idle = true;
  FlameTree t = compute_flame(lp.profile, o);
  check_invariants(t);
  ASSERT_EQ(t.devices.size(), 1u);
  const FlameDevice& d = t.devices[0];
  EXPECT_EQ(d.device, "/device:CPU:0");
  EXPECT_EQ(d.busy_ps, 30723402000 + 4420591000);  // the two ops never overlap
  EXPECT_EQ(d.span_ps, 36476385000);
  EXPECT_TRUE(d.has_modules);
  auto s = stacks(t, d);
  // ynn_fusion's fused computation has one instruction with metadata: the dot.
  EXPECT_EQ(s["jit(two_matmuls);dot_general;ynn_fusion"], 30723402000);
  EXPECT_EQ(s["jit(two_matmuls);dot_general;ynn_fusion.1"], 4420591000);
  EXPECT_EQ(s["[idle during modules]"] + s["[idle between modules]"], 36476385000 - 35143993000);
  EXPECT_EQ(s.size(), 4u);

  OpsResult ops = compute_ops(lp.profile, {.steady = testing::kAllWork});
  int64_t ops_total = 0;
  for (const OpGroup& g : ops.devices[0].groups) ops_total += g.total_ps;
  EXPECT_EQ(d.busy_ps, ops_total);
}

TEST(Flame, GemmSourceFramesResolveThroughTheStackFrameIndex) {
  LoadedProfile lp = load(fixture("xplane/mi300x_jax_gemm.xplane.pb"));
  FlameTree t = compute_flame(lp.profile, {.steady = testing::kAllWork});
  check_invariants(t);
  ASSERT_EQ(t.devices.size(), 1u);
  const FlameDevice& d = t.devices[0];
  EXPECT_EQ(d.busy_ps, 3475484000);
  EXPECT_EQ(d.span_ps, 9456212000);
  auto s = stacks(t, d);
  const std::string py = "/workspace/traces/generate_gemm_trace.py";
  const std::string callers = "<module> (" + py + ":96);main (" + py + ":76);";
  EXPECT_EQ(s[callers + "run_gemms (" + py + ":37);custom-call.1"], 3218884000);
  EXPECT_EQ(s[callers + "run_gemms (" + py + ":37);gemm_fusion_dot_general.1"], 15000000);
  // wrapped_broadcast (12 kernels, 153.72 us) comes from two source lines.
  EXPECT_EQ(s[callers + "run_gemms (" + py + ":34);wrapped_broadcast"] +
                s[callers + "run_gemms (" + py + ":35);wrapped_broadcast"],
            153720000);
  // Ops the HLO index has no source for stand alone.
  EXPECT_EQ(s["copy.1"], 27640000);
  EXPECT_EQ(s["__amd_rocclr_copyBuffer.kd"], 60240000);
}

TEST(Flame, FusionTimeIsSplitEquallyOverFusedInstructionsWithMetadata) {
  LoadedProfile lp = load(fixture("xplane/mi300x_jax_elementwise.xplane.pb"));
  FlameOptions o;
  o.steady = testing::kAllWork;
  o.by = FlameBy::kOpName;
  FlameTree t = compute_flame(lp.profile, o);
  check_invariants(t);
  ASSERT_EQ(t.devices.size(), 1u);
  // fusion.5 (jit__std, 184.4 us in 5 kernels) fuses 22 instructions with metadata, several
  // sharing an op path: each share is 184400000 / 22 ps, the 4 leftover picoseconds to the first.
  int64_t sum = 0, leaves = 0;
  for (const auto& [stack, w] : stacks(t, t.devices[0])) {
    if (!stack.ends_with(";fusion.5")) continue;
    sum += w;
    int64_t k = w / 8381818;
    EXPECT_GE(k, 1);
    EXPECT_LE(w, k * 8381819) << stack;
    leaves += k;
  }
  EXPECT_EQ(sum, 184400000);
  EXPECT_EQ(leaves, 22);
}

TEST(Flame, EveryProfileAddsUpForEveryMode) {
  for (const char* f :
       {"xplane/mi300x_jax_gemm.xplane.pb", "xplane/mi300x_jax_conv.xplane.pb",
        "xplane/mi300x_jax_elementwise.xplane.pb", "xplane/tpu_4chip_inference.xplane.pb",
        "xplane/tf_v100_8gpu_training.xplane.pb"}) {
    LoadedProfile lp = load(fixture(f));
    OpsResult ops = compute_ops(lp.profile, {.steady = testing::kAllWork});
    for (FlameBy by : {FlameBy::kSource, FlameBy::kOpName, FlameBy::kModule}) {
      FlameOptions o;
      o.steady = testing::kAllWork;
      o.by = by;
      FlameTree t = compute_flame(lp.profile, o);
      SCOPED_TRACE(std::string(f) + " " + flame_by_name(by));
      check_invariants(t);
      ASSERT_EQ(t.devices.size(), ops.devices.size());
      for (size_t i = 0; i < t.devices.size(); ++i) {
        // A TPU's one op line is measured on the device clock: its busy time is the sum of the
        // ops' self times there (they do not overlap), not the timeline's union.
        int64_t busy = ops.devices[i].busy_ps;
        if (ops.devices[i].device_clock_events > 0) {
          busy = 0;
          for (const OpGroup& g : ops.devices[i].groups) busy += g.self_ps;
        }
        EXPECT_EQ(t.devices[i].busy_ps, busy);
        EXPECT_EQ(t.devices[i].span_ps, ops.devices[i].span_ps);
      }
    }
  }
}

TEST(Flame, TpuIdleSplitsIntoDuringAndBetweenModules) {
  LoadedProfile lp = load(fixture("xplane/tpu_4chip_inference.xplane.pb"));
  FlameOptions o;
  o.steady = testing::kAllWork;
  o.by = FlameBy::kModule;
  o.device = "TPU:0";
  o.idle = true;
  FlameTree t = compute_flame(lp.profile, o);
  check_invariants(t);
  ASSERT_EQ(t.devices.size(), 1u);
  const FlameDevice& d = t.devices[0];
  EXPECT_TRUE(d.has_modules);
  EXPECT_GT(d.idle_during_modules_ps, 0);
  EXPECT_GT(d.idle_between_modules_ps, 0);
  auto s = stacks(t, d);
  EXPECT_EQ(s["[idle during modules]"], d.idle_during_modules_ps);
  EXPECT_EQ(s["[idle between modules]"], d.idle_between_modules_ps);

  o.idle = false;
  FlameTree busy_only = compute_flame(lp.profile, o);
  EXPECT_EQ(busy_only.nodes[0].total_ps, d.busy_ps);
}

TEST(Flame, SetApartTimeIsItsOwnFrameInTheSpan) {
  // global_sse compiles inside the capture, after train_step's first runs (steady: compiled
  // before it): the compile window lies inside the steady span and weighs the "[set apart]"
  // frame, once, and no idle frame.
  LoadedProfile lp = load(test_data("jax_cpu_8dev"));
  FlameTree t = compute_flame(lp.profile, {.idle = true});
  check_invariants(t);
  ASSERT_EQ(t.devices.size(), 8u);
  for (const FlameDevice& d : t.devices) {
    EXPECT_GT(d.set_apart_ps, 0) << d.device;
    EXPECT_EQ(stacks(t, d)["[set apart]"], d.set_apart_ps) << d.device;
  }
}

TEST(Flame, OverlappingStreamsShareTheirInstantsExactly) {
  // Line 0: A [0,100) holding B [10,30); line 1: C [20,50) and D [200,203). Busy = [0,100) and
  // [200,203): 103 ps. [20,30) is shared by B and C, [30,50) by A and C.
  Events ev;
  ev.resize(4);
  int64_t spans[4][2] = {{0, 100}, {10, 20}, {20, 30}, {200, 3}};
  for (uint32_t i = 0; i < 4; ++i) {
    ev.start_ps[i] = spans[i][0];
    ev.duration_ps[i] = spans[i][1];
  }
  std::vector<Line> lines(2);
  lines[0].first_event = 0;
  lines[0].event_count = 2;
  lines[1].first_event = 2;
  lines[1].event_count = 2;
  std::map<uint32_t, int64_t> w;
  share_busy_time(
      ev, lines, {0, 1}, [](uint32_t) { return true; },
      [&](uint32_t e, int64_t ps) { w[e] += ps; });
  EXPECT_EQ(w[0], 10 + 10 + 50);  // [0,10) + half of [30,50) + [50,100)
  EXPECT_EQ(w[1], 10 + 5);        // [10,20) + half of [20,30)
  EXPECT_EQ(w[2], 5 + 10);
  EXPECT_EQ(w[3], 3);
  EXPECT_EQ(w[0] + w[1] + w[2] + w[3], 103);
  // An odd instant: the earlier line takes the leftover picosecond.
  ev.duration_ps[2] = 11;  // C [20,31): [30,31) is shared by A and C
  w.clear();
  share_busy_time(
      ev, lines, {0, 1}, [](uint32_t) { return true; },
      [&](uint32_t e, int64_t ps) { w[e] += ps; });
  EXPECT_EQ(w[0], 10 + 1 + 69);
  EXPECT_EQ(w[2], 5);
}

TEST(Flame, RenderersEscapeAndAddUp) {
  EXPECT_EQ(xml_escape("<script>alert(\"x&y\")</script>'"),
            "&lt;script&gt;alert(&quot;x&amp;y&quot;)&lt;/script&gt;&apos;");
  EXPECT_EQ(xml_escape("a\nb\x01"), "a b ");
  EXPECT_EQ(xml_escape("\xff\xc3\xa9"), "\xef\xbf\xbd\xc3\xa9");  // broken byte, then é
  EXPECT_EQ(xml_escape("\xed\xa0\x80"), "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");  // a surrogate
  EXPECT_EQ(folded_frame("a;b\nc"), "a:b c");

  LoadedProfile lp = load(test_data("jax_cpu_8dev"));
  // By default a device weighs its busy time: idle is 92% of this example's spans.
  FlameTree busy = compute_flame(lp.profile, {.steady = testing::kAllWork});
  check_invariants(busy);
  int64_t busy_sum = 0;
  for (const FlameDevice& d : busy.devices) busy_sum += d.busy_ps;
  EXPECT_EQ(busy.nodes[0].total_ps, busy_sum);
  EXPECT_EQ(render_flame_folded(busy).find("[idle"), std::string::npos);
  FlameTree t = compute_flame(lp.profile, {.idle = true, .steady = testing::kAllWork});
  check_invariants(t);
  EXPECT_GT(t.nodes[0].total_ps, 10 * busy_sum);
  ASSERT_EQ(t.devices.size(), 8u);
  std::string folded = render_flame_folded(t);
  int64_t sum = 0;
  size_t lines = 0;
  for (size_t pos = 0; pos < folded.size();) {
    size_t nl = folded.find('\n', pos);
    std::string line = folded.substr(pos, nl - pos);
    sum += std::stoll(line.substr(line.rfind(' ') + 1));
    EXPECT_TRUE(line.starts_with("/device:CPU:"));
    ++lines;
    pos = nl + 1;
  }
  EXPECT_EQ(sum, t.nodes[0].total_ps);
  int64_t spans = 0;
  for (const FlameDevice& d : t.devices) spans += d.span_ps;
  EXPECT_EQ(sum, spans);

  std::string svg = render_flame_svg(t);
  EXPECT_TRUE(svg.starts_with("<?xml"));
  EXPECT_EQ(svg.find("href"), std::string::npos);
  EXPECT_EQ(svg.find("<script src"), std::string::npos);
  std::string speedscope = render_flame_speedscope(t);
  EXPECT_NE(speedscope.find("\"type\": \"sampled\""), std::string::npos);
}

}  // namespace
}  // namespace jaxprof
