// `jaxprof compile` on nsys-jax archives: XLA's host NVTX ranges against the reference figures of
// process 0 of the shared 4-process FSDP run (from the nsys-jax rules), the parallel region of
// the step function shared out among its worker threads, and the passes-only view.
#include <gtest/gtest.h>

#include <fstream>

#include "jaxprof/analysis/compile/compile.h"
#include "jaxprof/common/error.h"
#include "jaxprof/formats/load.h"
#include "jaxprof/io/csv.h"
#include "test_paths.h"

namespace jaxprof {
namespace {

std::string proc(int i) {
  return testing::fixture("nsys-jax/pax_fsdp4_4proc_proc" + std::to_string(i) + ".zip");
}

bool have_fixtures() { return std::ifstream(proc(0)).good() && std::ifstream(proc(1)).good(); }

TEST(NsysCompile, HostRangesBecomeAHostPlane) {
  if (!have_fixtures()) GTEST_SKIP() << "no shared nsys-jax fixtures";
  LoadedProfile lp;
  load_profile({proc(0)}, LoadOptions{}, lp);
  const Profile& p = lp.profile;
  const Plane* host = nullptr;
  for (const Plane& pl : p.planes)
    if (pl.kind == PlaneKind::kHostCpu) host = &pl;
  ASSERT_NE(host, nullptr);
  EXPECT_EQ(p.str(host->name), "/host:CPU");
  ASSERT_EQ(host->lines.size(), 5u);  // the main thread and four compiler workers
  EXPECT_EQ(p.str(p.lines[host->lines[0]].name), "main.py (215733)");
  size_t events = 0;
  for (uint32_t li : host->lines) events += p.lines[li].event_count;
  EXPECT_EQ(events, 27891u);
}

TEST(NsysCompile, ReferenceFiguresProcess0) {
  if (!have_fixtures()) GTEST_SKIP() << "no shared nsys-jax fixtures";
  LoadedProfile lp;
  load_profile({proc(0)}, LoadOptions{}, lp);
  CompileResult r = compute_compile(lp.profile);
  // 17 XlaCompile ranges whose wall times sum to 69,388.405 ms.
  ASSERT_EQ(r.compiles.size(), 17u);
  EXPECT_EQ(r.wall_ps, 69388404880000);
  int64_t phases = 0;
  for (const CompilePhaseTime& ph : r.phases) phases += ph.wall_ps;
  EXPECT_EQ(phases, r.wall_ps);
  const CompileRecord* step = nullptr;
  for (const CompileRecord& c : r.compiles) {
    int64_t sum = 0, steps = 0;
    for (const CompilePhaseTime& ph : c.phases) sum += ph.wall_ps;
    for (const CompileStepTime& s : c.steps) steps += s.wall_ps;
    EXPECT_EQ(sum, c.wall_ps) << c.module;
    EXPECT_EQ(steps, c.wall_ps) << c.module;
    if (c.program_id == 40) step = &c;
    // Every compile knows its program id: from XlaCompile, else from its XlaCompileBackend.
    EXPECT_NE(c.program_id, kNoProgram) << c.module;
    for (const CompileStepTime& s : c.steps) {
      EXPECT_EQ(s.name.find("program_id"), std::string::npos) << s.name;
      EXPECT_EQ(s.name.find("module="), std::string::npos) << s.name;
      // Autotuner measurements are folded: the kernels they timed are not steps.
      EXPECT_FALSE(s.name.starts_with("Thunk:")) << s.name;
    }
  }
  // The step function (program 40): 51,131.029 ms, compiled in parallel on four workers.
  ASSERT_NE(step, nullptr);
  EXPECT_EQ(step->module, "pjit__wrapped_step_fn");
  EXPECT_EQ(step->wall_ps, 51131029367000);
  EXPECT_EQ(step->worker_threads, 4u);
  // Workers' parallel work is shared out, not summed: wall stays under all-threads time.
  const CompilePhaseTime& cg = step->phases[static_cast<int>(CompilePhase::kCodegen)];
  EXPECT_LT(cg.wall_ps, cg.thread_ps);
  ASSERT_FALSE(r.modules.empty());
  EXPECT_EQ(r.modules[0].module, "pjit__wrapped_step_fn");
  EXPECT_EQ(r.modules[0].program_id, 40u);
}

TEST(NsysCompile, PassesOnly) {
  if (!have_fixtures()) GTEST_SKIP() << "no shared nsys-jax fixtures";
  LoadedProfile lp;
  load_profile({proc(0)}, LoadOptions{}, lp);
  CompileOptions o;
  o.passes_only = true;
  CompileResult r = compute_compile(lp.profile, o);
  ASSERT_FALSE(r.passes.empty());
  bool fusion = false;
  for (const CompileStepTime& s : r.passes) {
    EXPECT_FALSE(s.name.starts_with("Xla")) << s.name;
    EXPECT_EQ(s.phase, CompilePhase::kHloPasses) << s.name;
    fusion |= s.name == "priority-fusion";
  }
  EXPECT_TRUE(fusion);
  EXPECT_EQ(r.wall_ps, 69388404880000);  // the view changes steps, not compiles
}

TEST(NsysCompile, TwoProcessesAreNotDoubleCounted) {
  if (!have_fixtures()) GTEST_SKIP() << "no shared nsys-jax fixtures";
  int64_t each = 0;
  for (int i : {0, 1}) {
    LoadedProfile lp;
    load_profile({proc(i)}, LoadOptions{}, lp);
    each += compute_compile(lp.profile).wall_ps;
  }
  LoadedProfile both;
  load_profile({proc(0), proc(1)}, LoadOptions{}, both);
  EXPECT_EQ(compute_compile(both.profile).wall_ps, each);
}

TEST(Csv, QuotesCommasAndBlankLines) {
  std::string text = "a,b,c\r\n1,\"x,\"\"y\"\"\",3\n\"\",,\n";
  CsvTable t(text, "t.csv");
  ASSERT_EQ(t.rows(), 2u);
  EXPECT_EQ(t.find("c"), 2);
  EXPECT_EQ(t.at(0, 1), "x,\"y\"");
  EXPECT_EQ(t.at(1, 0), "");
  EXPECT_EQ(t.at(1, 2), "");
  EXPECT_THROW(CsvTable("a,b\n1\n", "t.csv"), InputError);
  EXPECT_THROW(CsvTable("a\n\"open\n", "t.csv"), InputError);
}

}  // namespace
}  // namespace jaxprof
