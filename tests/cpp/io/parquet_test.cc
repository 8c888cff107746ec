// The Parquet reader on hand-built files (each encoding and page kind it claims) and on the
// projected NVTX trace of a real nsys-jax archive.
#include "jaxprof/io/parquet.h"

#include <gtest/gtest.h>
#include <snappy-c.h>

#include <cstring>
#include <fstream>

#include "archive_builder.h"
#include "jaxprof/common/error.h"
#include "jaxprof/io/buffer.h"
#include "jaxprof/io/zip.h"
#include "test_paths.h"

namespace jaxprof {
namespace {

using testing::bitpacked_bits;
using testing::make_parquet;
using testing::page_header;
using testing::put32;
using testing::put64;
using testing::rle_run;
using testing::TestColumn;
using testing::with_length;

std::string int64_values(std::initializer_list<int64_t> vs) {
  std::string s;
  for (int64_t v : vs) put64(s, static_cast<uint64_t>(v));
  return s;
}

TEST(Parquet, PlainRequiredInt64) {
  std::string body = int64_values({1, -2, 3});
  TestColumn c{"x", 2, 0, false, 3, page_header(0, body.size(), body.size(), 3, 0) + body};
  std::string file = make_parquet({c}, 3);
  ParquetFile f(file, "t.parquet");
  EXPECT_EQ(f.num_rows(), 3);
  ASSERT_EQ(f.find("x"), 0);
  ParquetColumn col = f.read(0);
  ASSERT_EQ(col.size(), 3u);
  EXPECT_EQ(col.ints, (std::vector<int64_t>{1, -2, 3}));
  EXPECT_FALSE(col.is_null(1));
}

TEST(Parquet, DictionaryStringsWithNulls) {
  std::string dict =
      std::string("\x01\x00\x00\x00", 4) + "a" + std::string("\x02\x00\x00\x00", 4) + "bc";
  // Rows: "bc", null, "a", "bc", null, null, "a", "bc" (definition levels bit-packed).
  std::string defs = with_length(bitpacked_bits({1, 0, 1, 1, 0, 0, 1, 1}));
  std::string indices = std::string(1, '\x01') + bitpacked_bits({1, 0, 1, 0, 1, 0, 0, 0});
  std::string body = defs + indices;
  std::string pages = page_header(2, dict.size(), dict.size(), 2, 0) + dict +
                      page_header(0, body.size(), body.size(), 8, 8) + body;
  TestColumn c{"s", 6, 1, false, 8, pages};
  std::string file = make_parquet({c}, 8);
  ParquetColumn col = ParquetFile(file, "t.parquet").read(0);
  ASSERT_EQ(col.size(), 8u);
  std::vector<std::string> got;
  for (size_t i = 0; i < col.size(); ++i)
    got.push_back(col.is_null(i) ? "<null>" : std::string(col.strings[i]));
  EXPECT_EQ(got,
            (std::vector<std::string>{"bc", "<null>", "a", "bc", "<null>", "<null>", "a", "bc"}));
}

TEST(Parquet, DataPageV2DoublesSnappy) {
  // Levels stay uncompressed in front of the Snappy-compressed values.
  std::string defs = rle_run(2, 1) + rle_run(1, 0) + rle_run(1, 1);
  std::string values;
  for (double d : {1.5, -2.25, 1e300}) {
    uint64_t bits;
    std::memcpy(&bits, &d, 8);
    put64(values, bits);
  }
  size_t max = snappy_max_compressed_length(values.size());
  std::string packed(max, '\0');
  ASSERT_EQ(snappy_compress(values.data(), values.size(), packed.data(), &max), SNAPPY_OK);
  packed.resize(max);
  std::string body = defs + packed;
  std::string pages = page_header(3, defs.size() + values.size(), body.size(), 4, 0,
                                  static_cast<int32_t>(defs.size()), 0, true) +
                      body;
  TestColumn c{"d", 5, 1, false, 4, pages};
  std::string file = make_parquet({c}, 4, /*codec=*/1);
  ParquetColumn col = ParquetFile(file, "t.parquet").read(0);
  ASSERT_EQ(col.size(), 4u);
  EXPECT_EQ(col.doubles[0], 1.5);
  EXPECT_EQ(col.doubles[1], -2.25);
  EXPECT_TRUE(col.is_null(2));
  EXPECT_EQ(col.doubles[3], 1e300);
}

TEST(Parquet, ListColumnWithRepetitionLevels) {
  // Rows [1, 2], [], null, [3]: the newer nsys layout's "Range Stack".
  std::string reps = with_length(rle_run(1, 0) + rle_run(1, 1) + rle_run(3, 0));
  std::string defs = with_length(rle_run(2, 3) + rle_run(1, 1) + rle_run(1, 0) + rle_run(1, 3));
  std::string body = reps + defs + int64_values({1, 2, 3});
  TestColumn c{"Range Stack", 2, 1, true, 5, page_header(0, body.size(), body.size(), 5, 0) + body};
  std::string file = make_parquet({c}, 4);
  ParquetFile f(file, "t.parquet");
  ASSERT_EQ(f.columns()[0].max_repetition, 1);
  ASSERT_EQ(f.columns()[0].max_definition, 3);
  ASSERT_EQ(f.find("Range Stack"), 0);
  ParquetColumn col = f.read(0);
  auto rows = col.rows();
  ASSERT_EQ(rows.size(), 4u);
  std::vector<std::vector<int64_t>> got;
  for (auto [b, e] : rows) {
    std::vector<int64_t> row;
    for (uint32_t i = b; i < e; ++i)
      if (!col.is_null(i)) row.push_back(col.ints[i]);
    got.push_back(row);
  }
  EXPECT_EQ(got, (std::vector<std::vector<int64_t>>{{1, 2}, {}, {}, {3}}));
  EXPECT_EQ(col.definition[2], 1);  // empty list, not null
  EXPECT_EQ(col.definition[3], 0);  // null
}

TEST(Parquet, RejectsCorruptFiles) {
  std::string body = int64_values({1, 2, 3});
  TestColumn c{"x", 2, 0, false, 3, page_header(0, body.size(), body.size(), 3, 0) + body};
  std::string good = make_parquet({c}, 3);
  EXPECT_THROW(ParquetFile(good.substr(0, good.size() - 3), "t.parquet"), InputError);
  EXPECT_THROW(ParquetFile("PAR1garbage", "t.parquet"), InputError);
  // Footer length past the file.
  std::string bad_len = good;
  bad_len[bad_len.size() - 6] = '\x7f';
  EXPECT_THROW(ParquetFile(bad_len, "t.parquet"), InputError);
  // A page claiming more bytes than the chunk holds.
  TestColumn big{"x", 2, 0, false, 3, page_header(0, 1 << 20, 1 << 20, 3, 0) + body};
  std::string file = make_parquet({big}, 3);
  ParquetFile f(file, "t.parquet");
  try {
    f.read(0);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), "t.parquet");
  }
  // Dictionary index out of range.
  std::string dict = int64_values({7});
  std::string idx = std::string(1, '\x01') + bitpacked_bits({1, 1, 0, 0, 0, 0, 0, 0});
  TestColumn d{"x",
               2,
               0,
               false,
               2,
               page_header(2, dict.size(), dict.size(), 1, 0) + dict +
                   page_header(0, idx.size(), idx.size(), 2, 8) + idx};
  std::string dfile = make_parquet({d}, 2);
  EXPECT_THROW(ParquetFile(dfile, "t.parquet").read(0), InputError);
  // Every truncation of the file fails cleanly.
  for (size_t n = 0; n < good.size(); ++n) {
    try {
      ParquetFile t(good.substr(0, n), "t.parquet");
      t.read(0);
    } catch (const InputError&) {
    }
  }
}

TEST(Parquet, NsysJaxProjectedTrace) {
  std::string path = testing::fixture("nsys-jax/pax_fsdp4_4proc_proc0.zip");
  if (!std::ifstream(path).good()) GTEST_SKIP() << "no shared fixture " << path;
  ZipArchive zip(Buffer::open(path));
  const ZipEntry* e = zip.find("nvtx_gpu_proj_trace/trace.parquet");
  ASSERT_NE(e, nullptr);
  std::vector<uint8_t> storage;
  ParquetFile f(zip.read(*e, storage), "trace.parquet");
  EXPECT_EQ(f.num_rows(), 14305);
  ParquetColumn names = f.read(f.find("Name"));
  ParquetColumn start = f.read(f.find("Projected Start"));
  ParquetColumn ids = f.read(f.find("RangeId"));
  ASSERT_EQ(names.size(), 14305u);
  EXPECT_TRUE(names.is_null(0));
  EXPECT_EQ(names.strings[1], "TSL:XlaCompile:#module=jit__psum,program_id=1#");
  EXPECT_EQ(start.ints[0], 26906765692);
  EXPECT_TRUE(ids.is_null(0));
  EXPECT_EQ(ids.doubles[1], 25205.0);
  size_t thunks = 0;
  for (size_t i = 0; i < names.size(); ++i)
    thunks += !names.is_null(i) && names.strings[i].starts_with("TSL:Thunk:");
  EXPECT_EQ(thunks, 13827u);
}

}  // namespace
}  // namespace jaxprof
