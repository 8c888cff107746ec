// Clock alignment of several nsys-jax processes by the median skew of collective end times (the
// rule nsys-jax applies), on processes 0 and 1 of the shared 4-process FSDP run.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include "jaxprof/formats/nsys_jax/collective_alignment.h"
#include "jaxprof/formats/load.h"
#include "jaxprof/formats/nsys_jax/nsys_jax.h"
#include "jaxprof/formats/xplane/xplane.h"
#include "test_paths.h"

namespace jaxprof {
namespace {

std::string proc(int i) {
  return testing::fixture("nsys-jax/pax_fsdp4_4proc_proc" + std::to_string(i) + ".zip");
}

bool have_fixtures() { return std::ifstream(proc(0)).good() && std::ifstream(proc(1)).good(); }

TEST(NsysJaxAlign, MedianSkewOfCollectiveEndsGoesToZero) {
  if (!have_fixtures()) GTEST_SKIP() << "no shared nsys-jax fixtures";
  Profile p;
  for (int i : {0, 1}) import_nsys_jax(p, Buffer::open(proc(i)), "");
  finish_import(p);
  ClockSkew before = collective_end_skews(p);
  ASSERT_EQ(before.devices, 2u);
  EXPECT_GE(before.collectives, 100u);  // 120 per process, matched across both
  ASSERT_EQ(before.host_skew_ps.size(), 2u);
  // Raw Nsight clocks disagree; with two devices the skews are mirror images.
  EXPECT_GT(std::llabs(before.host_skew_ps[0]), 1000);
  EXPECT_LE(std::llabs(before.host_skew_ps[0] + before.host_skew_ps[1]), 2);

  std::vector<int64_t> applied = align_nsys_jax_clocks(p);
  EXPECT_EQ(applied, before.host_skew_ps);
  ClockSkew after = collective_end_skews(p);
  EXPECT_EQ(after.collectives, before.collectives);
  for (int64_t s : after.host_skew_ps) EXPECT_LE(std::llabs(s), 2) << "ps left after alignment";
}

TEST(NsysJaxAlign, LoadingSeveralArchivesAligns) {
  if (!have_fixtures()) GTEST_SKIP() << "no shared nsys-jax fixtures";
  LoadedProfile lp;
  load_profile({proc(0), proc(1)}, LoadOptions{}, lp);
  for (int64_t s : collective_end_skews(lp.profile).host_skew_ps) EXPECT_LE(std::llabs(s), 2);
  // One archive alone is left as recorded.
  LoadedProfile one;
  load_profile({proc(0)}, LoadOptions{}, one);
  EXPECT_EQ(collective_end_skews(one.profile).devices, 1u);
}

}  // namespace
}  // namespace jaxprof
