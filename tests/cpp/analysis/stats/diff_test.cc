// diff and check: samples from the project's JAX captures, op matching across compilations, and
// verdicts on samples with known differences.
#include "jaxprof/analysis/stats/diff.h"

#include <gtest/gtest.h>

#include <cmath>

#include "jaxprof/analysis/stats/regression.h"
#include "jaxprof/common/error.h"
#include "jaxprof/formats/load.h"
#include "test_paths.h"

namespace jaxprof {
namespace {

ProfileSamples samples_of(const std::string& path) {
  LoadedProfile lp;
  load_profile({path}, {}, lp);
  return collect_samples(lp.profile);
}

TEST(DiffSamples, CpuMatmulCompiledBeforeTheCaptureKeepsEveryRun) {
  ProfileSamples s = samples_of(testing::test_data("jax_cpu_matmul"));
  ASSERT_EQ(s.modules.size(), 1u);
  const ModuleSamples& m = s.modules[0];
  EXPECT_EQ(m.name, "jit_two_matmuls");
  EXPECT_EQ(m.devices, 1u);
  EXPECT_EQ(m.warmup_executions, 0u);
  EXPECT_EQ(m.per_exec.size(), 10u);  // compiled before the trace: no run is warm-up
  ASSERT_EQ(m.ops.size(), 2u);
  int64_t ops_total = 0;
  for (const OpSamples& op : m.ops) {
    EXPECT_EQ(op.per_exec.size(), 10u);
    EXPECT_EQ(op.events, 10u);
    EXPECT_EQ(op.opcode, "fusion");
    EXPECT_EQ(op.op_name, "jit(two_matmuls)/dot_general");
    EXPECT_EQ(op.category, "gemm");
    ops_total += op.total_ps;
  }
  // The ops of the 10 runs sum to 35,143,993,000 ps (tests/data/README.md).
  EXPECT_EQ(ops_total, 35143993000);
  EXPECT_LE(ops_total, m.total_ps);  // ops lie inside their executions
}

TEST(DiffSamples, EightDevicesGivePerDeviceRuns) {
  ProfileSamples s = samples_of(testing::test_data("jax_cpu_8dev"));
  ASSERT_EQ(s.modules.size(), 2u);
  for (const ModuleSamples& m : s.modules) {
    EXPECT_EQ(m.devices, 8u);
    // global_sse compiles inside the trace: its first run per device is left out; train_step
    // was compiled before it.
    const bool compiled = m.name == "jit_global_sse";
    EXPECT_EQ(m.warmup_executions, compiled ? 8u : 0u);
    EXPECT_EQ(m.per_exec.size(), compiled ? 24u : 32u);  // 4 steps x 8 devices
    EXPECT_DOUBLE_EQ(m.runs_per_device(), compiled ? 3 : 4);
  }
}

TEST(Diff, SameProfileIsUnchanged) {
  ProfileSamples s = samples_of(testing::test_data("jax_cpu_8dev"));
  DiffResult r = compute_diff(s, s);
  EXPECT_EQ(r.delta_ps, 0);
  EXPECT_EQ(r.ops.size(), 22u);  // 17 + 5 ops
  for (const auto* rows : {&r.modules, &r.ops, &r.categories})
    for (const DiffRow& row : *rows) {
      // Three steady runs per device cannot show that a noisy op stayed within 2%: such rows
      // are unclear, never slower or faster.
      EXPECT_TRUE(row.change == Change::kSame || row.change == Change::kUnclear) << row.name;
      EXPECT_EQ(row.matched_by.empty(), rows != &r.ops);
      ASSERT_TRUE(row.p_value);
      EXPECT_GT(*row.p_value, 0.5);
      ASSERT_TRUE(row.ratio);
      EXPECT_NEAR(*row.ratio, 1, 1e-9) << row.name;
      EXPECT_LE(row.ratio_low, 1);
      EXPECT_GE(row.ratio_high, 1);
    }
  EXPECT_FALSE(r.explained_share);
}

OpSamples op(std::string name, std::string op_name, std::string source, double per_exec,
             size_t n = 30) {
  OpSamples o;
  o.name = std::move(name);
  o.opcode = "fusion";
  o.op_name = std::move(op_name);
  o.source = std::move(source);
  o.category = "gemm";
  for (size_t i = 0; i < n; ++i) o.per_exec.push_back(per_exec + static_cast<double>(i % 7));
  o.events = n;
  return o;
}

ModuleSamples module(std::vector<OpSamples> ops, size_t n = 30) {
  ModuleSamples m;
  m.name = "jit_step";
  m.devices = 1;
  m.per_exec.assign(n, 0);
  for (const OpSamples& o : ops)
    for (size_t i = 0; i < n; ++i) m.per_exec[i] += o.per_exec[i] + 10;
  m.ops = std::move(ops);
  return m;
}

TEST(MatchOps, RenumberedFusionsFollowTheirSourceLine) {
  // An extra matmul at line 12 takes the name ynn_fusion.1; the old ynn_fusion.1 (line 13)
  // becomes ynn_fusion.2.
  ModuleSamples base = module({op("ynn_fusion", "jit(step)/dot_general", "s.py:11", 1000),
                               op("ynn_fusion.1", "jit(step)/dot_general", "s.py:13", 2000)});
  ModuleSamples now = module({op("ynn_fusion", "jit(step)/dot_general", "s.py:11", 1000),
                              op("ynn_fusion.1", "jit(step)/dot_general", "s.py:12", 1500),
                              op("ynn_fusion.2", "jit(step)/dot_general", "s.py:13", 2000)});
  std::vector<OpMatch> m = match_ops(base, now);
  ASSERT_EQ(m.size(), 3u);
  EXPECT_EQ(*m[0].base, 0u);
  EXPECT_EQ(*m[0].now, 0u);
  EXPECT_EQ(m[0].matched_by, "name");
  EXPECT_EQ(*m[1].base, 1u);
  EXPECT_EQ(*m[1].now, 2u);
  EXPECT_EQ(m[1].matched_by, "opcode+op_name+source");
  EXPECT_FALSE(m[2].base);
  EXPECT_EQ(*m[2].now, 1u);

  DiffResult r = compute_diff({{base}, {}}, {{now}, {}});
  ASSERT_EQ(r.ops.size(), 3u);
  const DiffRow& added = r.ops[0];  // the largest contribution
  EXPECT_EQ(added.name, "ynn_fusion.1");
  EXPECT_EQ(added.change, Change::kAdded);
  EXPECT_EQ(added.source, "s.py:12");
  // Mean of 1500 + (i % 7) over 30 runs (1502 + 85/30), times 30 runs of the module.
  EXPECT_DOUBLE_EQ(added.contribution_ps, 45085);
  EXPECT_EQ(r.ops[1].new_name.empty() ? r.ops[2].new_name : r.ops[1].new_name, "ynn_fusion.2");
  ASSERT_EQ(r.modules.size(), 1u);
  EXPECT_EQ(r.modules[0].change, Change::kSlower);
  EXPECT_LT(*r.modules[0].p_value, 1e-6);
  // The added op is all the op time that moved; the 10 ps per run that came with it as overhead
  // is time outside ops.
  ASSERT_TRUE(r.explained_share);
  EXPECT_NEAR(r.delta_ps, 45085 + 300, 1e-6);
  EXPECT_NEAR(r.ops_change.slower_ps, 45085, 1e-6);
  EXPECT_EQ(r.ops_change.faster_ps, 0);
  EXPECT_DOUBLE_EQ(added.cumulative_share, 1);
  EXPECT_DOUBLE_EQ(*r.explained_share, 1);
}

TEST(MatchOps, SameNameDifferentOpPathIsNotTheSameOp) {
  ModuleSamples base = module({op("fusion.3", "jit(step)/tanh", "s.py:5", 100)});
  ModuleSamples now = module({op("fusion.3", "jit(step)/exp", "s.py:6", 100)});
  std::vector<OpMatch> m = match_ops(base, now);
  ASSERT_EQ(m.size(), 2u);
  EXPECT_FALSE(m[0].now);
  EXPECT_FALSE(m[1].base);
}

TEST(Diff, SmallSignificantChangeBelowTheFloorIsSame) {
  // 1% slower with no noise: significant for the test, below the 2% floor.
  ModuleSamples base = module({op("dot.1", "jit(step)/dot_general", "s.py:3", 100000)});
  ModuleSamples now = module({op("dot.1", "jit(step)/dot_general", "s.py:3", 101000)});
  DiffResult r = compute_diff({{base}, {}}, {{now}, {}});
  EXPECT_LT(*r.ops[0].p_value, 1e-6);
  EXPECT_EQ(r.ops[0].change, Change::kSame);
  DiffOptions strict;
  strict.min_change = 0.005;
  EXPECT_EQ(compute_diff({{base}, {}}, {{now}, {}}, strict).ops[0].change, Change::kSlower);
}

TEST(Check, RegressionOnlyBeyondTheBudget) {
  ModuleSamples base = module({op("dot.1", "jit(step)/dot_general", "s.py:3", 100000)});
  ProfileSamples b{{base}, {}};
  CheckOptions o;
  CheckResult same = check_regression(b, b, o);
  EXPECT_EQ(same.verdict, Verdict::kOk);
  EXPECT_EQ(same.metric, "step (module jit_step; no step marks in BASE and NEW)");
  EXPECT_DOUBLE_EQ(*same.ratio, 1);
  EXPECT_LT(same.ratio_high, 1.05);

  // 3% slower, consistently: shown to be within a 5% budget, and over a 2% one.
  ModuleSamples slow3 = module({op("dot.1", "jit(step)/dot_general", "s.py:3", 103000)});
  EXPECT_EQ(check_regression(b, {{slow3}, {}}, o).verdict, Verdict::kOk);
  o.max_regression = 0.02;
  EXPECT_EQ(check_regression(b, {{slow3}, {}}, o).verdict, Verdict::kRegression);

  o.max_regression = 0.05;
  o.metric = "op:dot.1";
  ModuleSamples slow = module({op("dot.1", "jit(step)/dot_general", "s.py:3", 150000)});
  CheckResult r = check_regression(b, {{slow}, {}}, o);
  EXPECT_EQ(r.verdict, Verdict::kRegression);
  EXPECT_EQ(r.metric, "op jit_step/dot.1");
  // The median of the pairwise ratios (150000 + j % 7) / (100000 + i % 7).
  EXPECT_NEAR(*r.ratio, 1.5, 1e-4);
  EXPECT_LT(r.p_greater, 1e-6);
  EXPECT_GT(r.ratio_low, 1.49);
  EXPECT_LT(r.ratio_high, 1.51);

  o.metric = "op:nope";
  EXPECT_THROW(check_regression(b, b, o), InputError);
  o.metric = "module:jit_other";
  EXPECT_THROW(check_regression(b, b, o), InputError);
  o.metric = "steps";
  EXPECT_THROW(check_regression(b, b, o), InputError);
}

}  // namespace
}  // namespace jaxprof

namespace jaxprof {
namespace {

// One capture of the step whose matmul takes `dot` ps per run (+ i % 7 of jitter), as a process
// with its own fixed speed would give it.
ProfileSamples capture(double dot, bool with_tanh = true) {
  std::vector<OpSamples> ops = {op("dot.1", "jit(step)/dot_general", "s.py:3", dot)};
  if (with_tanh) ops.push_back(op("tanh.2", "jit(step)/tanh", "s.py:4", 500));
  ProfileSamples s{{module(std::move(ops))}, {}};
  s.modules[0].captures = {s.modules[0].per_exec.size()};
  return s;
}

TEST(PoolSamples, ConcatenatesCapturesAndFillsMissingOpsWithZero) {
  ProfileSamples p = pool_samples({capture(1000), capture(2000, false), capture(3000)});
  EXPECT_EQ(p.captures, 3u);
  ASSERT_EQ(p.modules.size(), 1u);
  const ModuleSamples& m = p.modules[0];
  EXPECT_EQ(m.captures, (std::vector<size_t>{30, 30, 30}));
  EXPECT_EQ(m.per_exec.size(), 90u);
  EXPECT_EQ(m.devices, 3u);
  EXPECT_DOUBLE_EQ(m.runs_per_device(), 30);  // per capture
  ASSERT_EQ(m.ops.size(), 2u);
  const OpSamples& tanh = m.ops[1];
  EXPECT_EQ(tanh.name, "tanh.2");
  ASSERT_EQ(tanh.per_exec.size(), 90u);
  EXPECT_DOUBLE_EQ(tanh.per_exec[29], 500 + 29 % 7);
  EXPECT_DOUBLE_EQ(tanh.per_exec[30], 0);  // the second capture has no tanh
  EXPECT_DOUBLE_EQ(tanh.per_exec[59], 0);
  EXPECT_DOUBLE_EQ(tanh.per_exec[60], 500);
  EXPECT_EQ(tanh.events, 60u);
  EXPECT_DOUBLE_EQ(m.ops[0].per_exec[45], 2000 + 15 % 7);  // run 15 of the second capture
}

TEST(PoolSamples, ProcessOffsetsAreNoiseNotChange) {
  // Both sides run the same program in three processes each, whose speeds differ by a few
  // percent; here NEW's processes happen to be the slower ones. Every run of a process is tight,
  // so a test over the pooled runs calls the sides different.
  ProfileSamples base = pool_samples({capture(100000), capture(103000), capture(98000)});
  ProfileSamples same = pool_samples({capture(106000), capture(109000), capture(104000)});
  ProfileSamples flat_b = base, flat_n = same;
  for (ProfileSamples* s : {&flat_b, &flat_n})
    for (ModuleSamples& m : s->modules) m.captures.clear();
  DiffResult runs = compute_diff(flat_b, flat_n);
  EXPECT_STREQ(runs.modules[0].test, "mann-whitney");
  EXPECT_LT(*runs.modules[0].p_value, 1e-10);
  EXPECT_EQ(runs.modules[0].change, Change::kSlower);

  DiffResult r = compute_diff(base, same);
  EXPECT_EQ(r.base_captures, 3u);
  EXPECT_STREQ(r.modules[0].test, "capture-t");
  EXPECT_EQ(r.modules[0].base_captures, 3u);
  EXPECT_GT(*r.modules[0].p_value, 0.01);
  // Not a change, and not shown to be within 2% either: three processes a side are too few.
  EXPECT_EQ(r.modules[0].change, Change::kUnclear);
  EXPECT_LT(r.modules[0].ratio_low, 1);
  EXPECT_GT(r.modules[0].ratio_high, 1.02);

  CheckResult c = check_regression(base, same, {});
  EXPECT_STREQ(c.test, "capture-t");
  EXPECT_EQ(c.base_captures, 3u);
  // Three processes a side cannot show whether a 6% step is within a 5% budget.
  EXPECT_EQ(c.verdict, Verdict::kInconclusive);
  EXPECT_GT(c.p_greater, 0.05);
  ASSERT_TRUE(c.more);
  EXPECT_GT(c.more->per_side, 0u);

  // 2.5x slower in every process: a regression, with the matmul named.
  ProfileSamples slow = pool_samples({capture(260000), capture(270000), capture(240000)});
  CheckResult s = check_regression(base, slow, {});
  EXPECT_EQ(s.verdict, Verdict::kRegression);
  EXPECT_LT(s.p_greater, 0.01);
  EXPECT_GT(s.ratio_low, 1.5);
  ASSERT_TRUE(s.top_op);
  EXPECT_EQ(s.top_op->name, "dot.1");
  // Geometric means of the capture medians: the medians are the op time + 3 (i % 7 over 30
  // runs) + the tanh's 503 + 2 x 10 of overhead.
  double base_g = std::cbrt(100526.0 * 103526.0 * 98526.0);
  EXPECT_NEAR(s.base_median_ps, base_g, 1e-6 * base_g);
}

}  // namespace
}  // namespace jaxprof
