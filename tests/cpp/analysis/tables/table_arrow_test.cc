// A table through the Arrow C data and stream interfaces (table_arrow.h): the schema's formats,
// names and metadata, the one batch's buffers (booleans as bits, strings as a dictionary, nulls
// in the validity bitmap), the end of the stream, and the arrays outliving the stream and every
// other reference to the table.
#include "jaxprof/analysis/tables/table_arrow.h"

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <string_view>

namespace jaxprof {
namespace {

RecordTable sample() {
  RecordTable t;
  t.name = "sample";
  RecordColumn& n = t.add("n", TableType::kInt64, "ps", "a number");
  RecordColumn& flag = t.add("flag", TableType::kBool, "", "a flag");
  RecordColumn& s = t.add("s", TableType::kString, "", "a string");
  RecordColumn& x = t.add("x", TableType::kDouble, "", "");
  StringCodes codes(s);
  for (int i = 0; i < 10; ++i) {
    if (i == 3)
      n.push_null();
    else
      n.push(i * 100);
    flag.push_b(i % 3 == 0);
    codes.push(i % 2 ? "odd" : "even", i != 4);
    x.push_f(i / 4.0);
  }
  t.rows = 10;
  t.finish();
  return t;
}

// The key and value of Arrow's metadata encoding, pair by pair.
std::string metadata_text(const char* m) {
  std::string out;
  int32_t pairs, len;
  std::memcpy(&pairs, m, 4);
  m += 4;
  for (int32_t i = 0; i < pairs * 2; ++i) {
    std::memcpy(&len, m, 4);
    out.append(m + 4, len).append(i % 2 ? ";" : "=");
    m += 4 + len;
  }
  return out;
}

bool bit(const void* bitmap, int64_t i) {
  return static_cast<const uint8_t*>(bitmap)[i >> 3] >> (i & 7) & 1;
}

TEST(TableArrow, SchemaNamesEveryColumnWithItsFormatAndMetadata) {
  ArrowExport exported(sample());
  ArrowSchema schema{};
  exported.export_schema(&schema);
  EXPECT_STREQ(schema.format, "+s");
  ASSERT_EQ(schema.n_children, 4);
  const char* formats[] = {"l", "b", "i", "g"};
  const char* names[] = {"n", "flag", "s", "x"};
  for (int i = 0; i < 4; ++i) {
    EXPECT_STREQ(schema.children[i]->format, formats[i]);
    EXPECT_STREQ(schema.children[i]->name, names[i]);
    EXPECT_EQ(schema.children[i]->flags, ARROW_FLAG_NULLABLE);
  }
  EXPECT_EQ(metadata_text(schema.children[0]->metadata), "unit=ps;meaning=a number;");
  ASSERT_NE(schema.children[2]->dictionary, nullptr);
  EXPECT_STREQ(schema.children[2]->dictionary->format, "u");
  EXPECT_EQ(schema.children[0]->dictionary, nullptr);
  schema.release(&schema);
  EXPECT_EQ(schema.release, nullptr);
}

TEST(TableArrow, StreamHandsOneBatchOverTheColumnsThenEnds) {
  auto exported = std::make_shared<const ArrowExport>(sample());
  ArrowArrayStream stream{};
  ArrowExport::export_stream(exported, &stream);
  ArrowSchema schema{};
  ASSERT_EQ(stream.get_schema(&stream, &schema), 0);
  schema.release(&schema);

  ArrowArray batch{};
  ASSERT_EQ(stream.get_next(&stream, &batch), 0);
  ASSERT_NE(batch.release, nullptr);
  ArrowArray end{};
  ASSERT_EQ(stream.get_next(&stream, &end), 0);
  EXPECT_EQ(end.release, nullptr);  // the end of the stream
  EXPECT_EQ(stream.get_last_error(&stream), nullptr);
  stream.release(&stream);
  exported.reset();  // the batch holds the table now

  EXPECT_EQ(batch.length, 10);
  ASSERT_EQ(batch.n_children, 4);
  const ArrowArray& n = *batch.children[0];
  EXPECT_EQ(n.null_count, 1);
  EXPECT_FALSE(bit(n.buffers[0], 3));
  EXPECT_TRUE(bit(n.buffers[0], 4));
  EXPECT_EQ(static_cast<const int64_t*>(n.buffers[1])[9], 900);

  const ArrowArray& flag = *batch.children[1];
  EXPECT_EQ(flag.null_count, 0);
  EXPECT_EQ(flag.buffers[0], nullptr);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(bit(flag.buffers[1], i), i % 3 == 0) << i;

  const ArrowArray& s = *batch.children[2];
  EXPECT_EQ(s.null_count, 1);
  EXPECT_FALSE(bit(s.buffers[0], 4));
  ASSERT_NE(s.dictionary, nullptr);
  ASSERT_EQ(s.dictionary->length, 2);
  const auto* offsets = static_cast<const int32_t*>(s.dictionary->buffers[1]);
  std::string_view bytes(static_cast<const char*>(s.dictionary->buffers[2]), offsets[2]);
  const int32_t odd = static_cast<const int32_t*>(s.buffers[1])[1];
  EXPECT_EQ(bytes.substr(offsets[odd], offsets[odd + 1] - offsets[odd]), "odd");

  EXPECT_DOUBLE_EQ(static_cast<const double*>(batch.children[3]->buffers[1])[6], 1.5);
  batch.release(&batch);
  EXPECT_EQ(batch.release, nullptr);
}

TEST(TableArrow, EmptyTableHasNoNullBuffers) {
  RecordTable t;
  t.name = "empty";
  t.add("s", TableType::kString, "", "");
  t.add("n", TableType::kUInt64, "", "");
  t.finish();
  auto exported = std::make_shared<const ArrowExport>(std::move(t));
  ArrowArray batch{};
  ArrowExport::export_stream_batch(exported, &batch);
  EXPECT_EQ(batch.length, 0);
  for (int i = 0; i < 2; ++i) EXPECT_NE(batch.children[i]->buffers[1], nullptr);
  EXPECT_EQ(batch.children[0]->dictionary->length, 0);
  EXPECT_NE(batch.children[0]->dictionary->buffers[2], nullptr);
  batch.release(&batch);
}

}  // namespace
}  // namespace jaxprof
