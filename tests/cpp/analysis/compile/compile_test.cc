// compile on the project's JAX CPU capture and the TPU fixture. Expected numbers come from
// tests/python/compile/test_compile.py's brute-force computation over the raw events (protobuf), which
// agrees with the CLI to the picosecond.
#include "jaxprof/analysis/compile/compile.h"

#include <gtest/gtest.h>

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

int64_t phase_wall(const CompileRecord& c, CompilePhase p) {
  return c.phases[static_cast<int>(p)].wall_ps;
}

void ExpectPhasesAddUp(const CompileResult& r) {
  int64_t total = 0;
  for (const CompileRecord& c : r.compiles) {
    int64_t sum = 0, steps = 0;
    for (const CompilePhaseTime& ph : c.phases) sum += ph.wall_ps;
    for (const CompileStepTime& s : c.steps) steps += s.wall_ps;
    EXPECT_EQ(sum, c.wall_ps);
    EXPECT_EQ(steps, c.wall_ps);
    total += c.wall_ps;
  }
  EXPECT_EQ(total, r.wall_ps);
}

TEST(Compile, Classification) {
  EXPECT_EQ(classify_compile_event("backend_compile_and_load").kind, CompileEventKind::kJaxStage);
  EXPECT_EQ(classify_compile_event("lower_sharding_computation").phase, CompilePhase::kLower);
  EXPECT_EQ(classify_compile_event("$partial_eval.py:2268 trace_to_jaxpr").phase,
            CompilePhase::kTrace);
  EXPECT_EQ(classify_compile_event("$pjit.py:250 cache_miss").kind, CompileEventKind::kNone);
  EXPECT_EQ(classify_compile_event("PjRtCpuClient::Compile").kind, CompileEventKind::kXlaRoot);
  EXPECT_EQ(classify_compile_event("TfrtTpuCompiler::Compile").kind, CompileEventKind::kXlaRoot);
  EXPECT_EQ(classify_compile_event("FusionCompiler::Compile").phase, CompilePhase::kCodegen);
  EXPECT_EQ(classify_compile_event("LowerToLLVMPass").phase, CompilePhase::kCodegen);
  EXPECT_EQ(classify_compile_event("XLA::TPU run hlo passes").phase, CompilePhase::kHloPasses);
  EXPECT_EQ(classify_compile_event("XLA::TPU run backend").phase, CompilePhase::kCodegen);
  EXPECT_EQ(classify_compile_event("dce").kind, CompileEventKind::kNone);  // inherits in context
}

TEST(Compile, CpuCaptureGlobalSse) {
  LoadedProfile lp = load(test_data("jax_cpu_8dev"));
  CompileResult r = compute_compile(lp.profile);
  ASSERT_EQ(r.compiles.size(), 1u);
  const CompileRecord& c = r.compiles[0];
  EXPECT_EQ(c.module, "jit_global_sse");
  EXPECT_EQ(c.function, "global_sse");
  EXPECT_EQ(c.thread, "python3");
  EXPECT_EQ(c.start_ps, 1182448000);
  EXPECT_EQ(c.wall_ps, 67278303000);
  EXPECT_EQ(phase_wall(c, CompilePhase::kTrace), 11882167000);
  EXPECT_EQ(phase_wall(c, CompilePhase::kLower), 9385054000);
  EXPECT_EQ(phase_wall(c, CompilePhase::kHloPasses), 5396803000);
  EXPECT_EQ(phase_wall(c, CompilePhase::kCodegen), 34843757000);
  EXPECT_EQ(phase_wall(c, CompilePhase::kCompileOther), 4491640000);
  EXPECT_EQ(phase_wall(c, CompilePhase::kBetweenStages), 1278882000);
  // The compiler pool thread and two codegen threads.
  EXPECT_EQ(c.worker_threads, 3u);
  EXPECT_EQ(c.worker_busy_ps, 83216772000);
  ASSERT_EQ(r.modules.size(), 1u);
  EXPECT_EQ(r.modules[0].wall_ps, c.wall_ps);
  ExpectPhasesAddUp(r);
}

TEST(Compile, TpuFourCompiles) {
  LoadedProfile lp = load(fixture("xplane/tpu_4chip_inference.xplane.pb"));
  CompileResult r = compute_compile(lp.profile);
  ASSERT_EQ(r.compiles.size(), 4u);
  const char* modules[] = {"jit_convert_element_type", "jit_broadcast_in_dim", "jit__psum",
                           "jit_f"};
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(r.compiles[i].module, modules[i]);
    EXPECT_EQ(r.compiles[i].thread, "main/3116817");
  }
  // PjitFunction(convert_element_type): trace, lower_sharding_computation, backend_compile; the
  // TPU backend runs on two worker threads (XLA::TPU run backend, memory space assignment).
  const CompileRecord& c = r.compiles[0];
  EXPECT_EQ(c.start_ps, 3949678153000);
  EXPECT_EQ(c.wall_ps, 1401798800000);
  EXPECT_EQ(phase_wall(c, CompilePhase::kLower), 190957223000);
  EXPECT_EQ(phase_wall(c, CompilePhase::kHloPasses), 410792889000);
  EXPECT_EQ(phase_wall(c, CompilePhase::kCodegen), 228087998000);
  EXPECT_EQ(c.worker_threads, 2u);
  EXPECT_EQ(c.worker_busy_ps, 253990686000);
  ExpectPhasesAddUp(r);
}

TEST(Compile, ProfilesWithoutCompileEventsSayWhy) {
  LoadedProfile lp = load(fixture("xplane/mi300x_jax_conv.xplane.pb"));
  CompileResult r = compute_compile(lp.profile);
  EXPECT_TRUE(r.compiles.empty());
  EXPECT_EQ(r.wall_ps, 0);
  ASSERT_FALSE(r.notes.empty());
}

}  // namespace
}  // namespace jaxprof
