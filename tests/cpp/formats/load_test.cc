// HLO files passed next to a profile: both a wrapped xla.HloProto and a bare HloModuleProto.
#include <gtest/gtest.h>

#include <fstream>

#include "jaxprof/common/error.h"
#include "jaxprof/formats/load.h"
#include "jaxprof/wire/reader.h"
#include "test_paths.h"

namespace jaxprof {
namespace {

// The serialized HloProto of module `name` from a profile's /host:metadata plane.
std::string hlo_proto_of(const Profile& p, std::string_view name) {
  for (uint32_t mi = 0; mi < p.event_metadata.size(); ++mi) {
    const EventMetadata& m = p.event_metadata[mi];
    if (p.planes[m.plane].kind != PlaneKind::kMetadata || !p.str(m.name).starts_with(name)) continue;
    for (const Stat& s : p.metadata_stats(mi))
      if (p.str(s.name) == "Hlo Proto") return std::string(s.value.str);
  }
  return {};
}

std::string write_temp(const std::string& name, const std::string& bytes) {
  std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

TEST(LoadHloFiles, WrappedAndBareModulesJoinTheIndex) {
  LoadedProfile source;
  load_profile({testing::fixture("xplane/mi300x_jax_gemm.xplane.pb")}, {}, source);
  std::string wrapped = hlo_proto_of(source.profile, "jit_convert_element_type");
  ASSERT_FALSE(wrapped.empty());
  // HloProto field 1 is the HloModuleProto.
  wire::Reader r(wrapped, reinterpret_cast<const uint8_t*>(wrapped.data()));
  wire::Field f;
  ASSERT_TRUE(r.next(f));
  ASSERT_EQ(f.number, 1u);
  std::string bare(f.bytes);

  // The TF profile has no /host:metadata: its HLO index is empty until files are added.
  std::string tf = testing::fixture("xplane/tf_v100_8gpu_training.xplane.pb");
  LoadedProfile lp;
  load_profile({tf}, {}, lp);
  EXPECT_TRUE(lp.profile.hlo.empty());
  LoadedProfile with_files;
  load_profile({tf, write_temp("m.hlo.pb", wrapped), write_temp("n.hlo_proto.pb", bare)}, {},
               with_files);
  ASSERT_EQ(with_files.profile.hlo.modules().size(), 2u);
  for (const auto& m : with_files.profile.hlo.modules()) {
    EXPECT_EQ(m->name, "jit_convert_element_type");
    EXPECT_NE(m->find("copy.1"), nullptr);
  }
  EXPECT_EQ(with_files.files.hlo_files.size(), 2u);
}

TEST(LoadHloFiles, CorruptHloFileNamesTheFile) {
  std::string tf = testing::fixture("xplane/tf_v100_8gpu_training.xplane.pb");
  std::string bad = write_temp("bad.hlo.pb", std::string("\x0a\x05\x0a\xff\xff", 5));
  LoadedProfile lp;
  try {
    load_profile({tf, bad}, {}, lp);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), bad);
    EXPECT_NE(e.reason().find("HloProto"), std::string::npos) << e.what();
  }
}

TEST(LoadHloFiles, HloFilesAloneAreNotAProfile) {
  std::string hlo = write_temp("only.hlo.pb", "x");
  LoadedProfile lp;
  EXPECT_THROW(load_profile({hlo}, {}, lp), InputError);
}

}  // namespace
}  // namespace jaxprof
