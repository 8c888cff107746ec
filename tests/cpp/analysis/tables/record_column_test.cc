// RecordColumn::push_nulls gives the values and validity bitmap that one push_null per row gives,
// wherever the run of nulls starts and ends within a bitmap byte.
#include <gtest/gtest.h>

#include "jaxprof/analysis/tables/table.h"

namespace jaxprof {
namespace {

RecordColumn int_column() {
  RecordColumn c;
  c.type = TableType::kInt64;
  return c;
}

TEST(RecordColumn, PushNullsEqualsOneNullPerRow) {
  for (size_t before : {0, 1, 3, 8, 13}) {
    for (size_t count : {0, 1, 5, 8, 19}) {
      RecordColumn bulk = int_column(), each = int_column();
      for (size_t i = 0; i < before; ++i) {
        bulk.push(static_cast<int64_t>(i + 1));
        each.push(static_cast<int64_t>(i + 1));
      }
      bulk.push_nulls(count);
      for (size_t i = 0; i < count; ++i) each.push_null();
      // Present rows after the run keep their bits.
      for (RecordColumn* c : {&bulk, &each}) {
        c->push(7);
        c->push(9);
      }
      const size_t rows = before + count + 2;
      EXPECT_EQ(bulk.i64, each.i64) << before << " " << count;
      EXPECT_EQ(bulk.null_count, each.null_count);
      RecordTable t;
      t.rows = rows;
      t.columns.push_back(bulk);
      t.columns.push_back(each);
      t.finish();
      EXPECT_EQ(t.columns[0].validity, t.columns[1].validity) << before << " " << count;
      for (size_t r = 0; r < rows; ++r)
        EXPECT_EQ(t.columns[0].is_null(r), r >= before && r < before + count) << r;
    }
  }
}

}  // namespace
}  // namespace jaxprof
