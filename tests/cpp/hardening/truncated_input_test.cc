// A file cut off while it was written (or copied) is reported as one, in every format where the
// cut can be told from damage: it ends early, where (the byte offset and the size), and that the
// capture may have been cut off.
#include <gtest/gtest.h>
#include <zlib.h>

#include "archive_builder.h"
#include "hostile_input.h"
#include "jaxprof/analysis/partial/extract_partials.h"
#include "jaxprof/model/partial/partial.h"
#include "jaxprof/formats/load.h"
#include "jaxprof/formats/partial/partial_file.h"
#include "jaxprof/io/xz.h"
#include "jaxprof/io/zip.h"
#include "test_paths.h"

namespace jaxprof {
namespace {

using testing::expect_refused;
using testing::fixture;
using testing::read_whole_file;
using testing::test_data;
using testing::write_temp_file;

// The words every truncation message has, for a file (or decompressed data) of `size` bytes.
std::vector<std::string> cut_words(size_t size, const char* what = "the file") {
  return {std::string(what) + " ends early", "truncated after " + std::to_string(size) + " bytes",
          "may have been cut off"};
}

std::vector<std::string> plus(std::vector<std::string> a, const std::string& b) {
  a.push_back(b);
  return a;
}

TEST(TruncatedInput, XSpace) {
  std::string whole =
      read_whole_file(test_data("jax_cpu_matmul/plugins/profile/session/vm.xplane.pb"));
  ASSERT_GT(whole.size(), 1000u);
  for (size_t cut : {whole.size() / 3, whole.size() - 1, size_t{3}}) {
    std::string path = write_temp_file("cut.xplane.pb", whole.substr(0, cut));
    expect_refused(path, plus(cut_words(cut), "(at byte offset "));
  }
}

TEST(TruncatedInput, XSpaceOfTheSharedProfiles) {
  std::string whole = read_whole_file(fixture("xplane/tpu_4chip_inference.xplane.pb"));
  if (whole.empty()) GTEST_SKIP() << "no shared fixtures";
  size_t cut = whole.size() * 37 / 100;
  expect_refused(write_temp_file("tpu_cut.xplane.pb", whole.substr(0, cut)),
                 plus(cut_words(cut), "plane"));
}

TEST(TruncatedInput, DamagedBytesAreNotCalledACut) {
  // Text-mode mangling gives lengths of terabytes: corrupt, not cut short.
  std::string bad = fixture("bad/tpu_inference_utf8_mangled.xplane.pb");
  if (read_whole_file(bad).empty()) GTEST_SKIP() << "no shared fixtures";
  auto r = testing::try_load({bad});
  ASSERT_TRUE(r.error.has_value());
  EXPECT_NE(std::string(r.error->what()).find("corrupt protobuf"), std::string::npos);
  EXPECT_EQ(std::string(r.error->what()).find("ends early"), std::string::npos);
}

TEST(TruncatedInput, GzipAndItsContents) {
  std::string gz = read_whole_file(test_data("jax_cpu_matmul.xplane.pb.gz"));
  expect_refused(write_temp_file("half.xplane.pb.gz", gz.substr(0, gz.size() / 2)),
                 plus(cut_words(gz.size() / 2), "gzip"));
  // A whole gzip stream around a cut XSpace: the decompressed data ends early.
  std::string xspace =
      read_whole_file(test_data("jax_cpu_matmul/plugins/profile/session/vm.xplane.pb"));
  std::string cut = xspace.substr(0, xspace.size() / 2);
  uLongf n = compressBound(cut.size()) + 32;
  std::string packed(n, '\0');
  z_stream zs{};
  ASSERT_EQ(deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
  zs.next_in = reinterpret_cast<Bytef*>(cut.data());
  zs.avail_in = static_cast<uInt>(cut.size());
  zs.next_out = reinterpret_cast<Bytef*>(packed.data());
  zs.avail_out = static_cast<uInt>(packed.size());
  ASSERT_EQ(deflate(&zs, Z_FINISH), Z_STREAM_END);
  packed.resize(zs.total_out);
  deflateEnd(&zs);
  expect_refused(write_temp_file("inner_cut.xplane.pb.gz", packed),
                 cut_words(cut.size(), "the decompressed data"));
}

TEST(TruncatedInput, ChromeTrace) {
  std::string trace = R"({"traceEvents":[{"ph":"X","pid":1,"tid":1,"ts":1,"dur":2,"name":"a"},)"
                      R"({"ph":"X","pid":1,"tid":1,"ts":5,"dur":2,"name":"b"}]})";
  for (size_t cut : {trace.size() - 1, trace.size() - 2, trace.size() / 2, size_t{20}}) {
    SCOPED_TRACE(trace.substr(0, cut));
    expect_refused(write_temp_file("cut.trace.json", trace.substr(0, cut)), cut_words(cut));
  }
}

TEST(TruncatedInput, ZipArchiveAndItsMembers) {
  std::string parquet = testing::nsys_trace_parquet(
      {{"TSL:XlaModule:#hlo_module=jit_f,program_id=1#", 1000, 500, 1, {}},
       {"TSL:Thunk:#hlo_op=fusion.1#", 1100, 200, 2, 1}});
  std::string zip = testing::make_zip({{"nvtx_gpu_proj_trace/trace.parquet", parquet}});
  size_t cut = zip.size() - 30;
  expect_refused(write_temp_file("cut.zip", zip.substr(0, cut)),
                 plus(cut_words(cut), "central directory"));
  // An archive whose Parquet member was cut before it was zipped.
  std::string short_parquet = parquet.substr(0, parquet.size() / 2);
  std::string path = write_temp_file(
      "cut_member.zip", testing::make_zip({{"nvtx_gpu_proj_trace/trace.parquet", short_parquet}}));
  expect_refused(path, plus(cut_words(short_parquet.size()), "Parquet footer"));
}

TEST(TruncatedInput, Xz) {
  std::string xz = read_whole_file(fixture("nsys-jax/pax_fsdp4_4proc_proc0.zip"));
  if (xz.empty()) GTEST_SKIP() << "no shared fixtures";
  // The host range table of the real archive, cut.
  ZipArchive zip(Buffer::from_bytes(std::vector<uint8_t>(xz.begin(), xz.end()), "a.zip"));
  std::vector<uint8_t> storage;
  std::string_view member = zip.read(*zip.find("report_nvtx_pushpop_trace.csv.xz"), storage);
  std::string_view cut = member.substr(0, member.size() / 2);
  try {
    unxz(cut, "t.csv.xz", size_t{1} << 30);
    ADD_FAILURE() << "a cut xz stream decoded";
  } catch (const InputError& e) {
    for (const std::string& w : cut_words(cut.size()))
      EXPECT_NE(std::string(e.what()).find(w), std::string::npos) << e.what();
  }
}

TEST(TruncatedInput, HloProtoFile) {
  std::string whole = read_whole_file(fixture("xplane/jit__normal(9).hlo_proto.pb"));
  if (whole.empty()) GTEST_SKIP() << "no shared fixtures";
  std::string xspace = test_data("jax_cpu_matmul/plugins/profile/session/vm.xplane.pb");
  size_t cut = whole.size() / 2;
  std::string path = write_temp_file("cut.hlo.pb", whole.substr(0, cut));
  auto r = testing::try_load({xspace, path});
  ASSERT_TRUE(r.error.has_value());
  EXPECT_EQ(r.error->file(), path);
  for (const std::string& w : cut_words(cut))
    EXPECT_NE(std::string(r.error->what()).find(w), std::string::npos) << r.error->what();
}

TEST(TruncatedInput, PartialFile) {
  LoadedProfile loaded;
  load_profile({test_data("jax_cpu_8dev")}, {}, loaded);
  std::vector<HostPartial> hosts = extract_partials(loaded.profile, {});
  ASSERT_FALSE(hosts.empty());
  const std::string whole = write_partial_file({&hosts.front()});
  ASSERT_GT(whole.size(), 100u);
  for (size_t cut : {whole.size() / 2, whole.size() - 1}) {
    std::string path = write_temp_file("cut.partial", whole.substr(0, cut));
    try {
      read_partial_path(path);
      ADD_FAILURE() << "a partial file cut at " << cut << " was read";
    } catch (const InputError& e) {
      EXPECT_EQ(e.file(), path);
      for (const std::string& w : plus(cut_words(cut), "a host's partial"))
        EXPECT_NE(std::string(e.what()).find(w), std::string::npos) << e.what();
    }
  }
  // Compressed: the count is of the decompressed bytes, and says so.
  std::string cut = whole.substr(0, whole.size() / 2);
  std::string path = write_temp_file("cut.partial.gz", "");
  save_partial_file(path, cut);
  try {
    read_partial_path(path);
    ADD_FAILURE() << "a compressed partial file cut short was read";
  } catch (const InputError& e) {
    for (const std::string& w : cut_words(cut.size(), "the decompressed data"))
      EXPECT_NE(std::string(e.what()).find(w), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace jaxprof
