// The tables a query names, as the Python package's named_tables finds them: whole words, any
// case (the DuckDB session itself is tested end to end in tests/python/tables/test_sql_native.py).
#include "jaxprof/sql/duckdb_session.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace jaxprof {
namespace {

using Names = std::vector<std::string>;

TEST(TablesNamedIn, WholeWordsInAnyCase) {
  EXPECT_EQ(tables_named_in("SELECT * FROM device_ops"), Names{"device_ops"});
  EXPECT_EQ(tables_named_in("select 1 from DEVICE_OPS, Steps"), (Names{"device_ops", "steps"}));
  EXPECT_EQ(tables_named_in("SELECT * FROM compile_passes"), Names{"compile_passes"});
  EXPECT_EQ(tables_named_in("SELECT * FROM compiles c JOIN compile_passes p USING (compile)"),
            (Names{"compiles", "compile_passes"}));
  EXPECT_EQ(tables_named_in("SELECT device_ops2 FROM my_steps"), Names{});
  EXPECT_EQ(tables_named_in("SELECT * FROM \"memory\""), Names{"memory"});
}

}  // namespace
}  // namespace jaxprof
