// `jaxprof sql`'s output from DuckDB's rows: the numbers as Python and Arrow write them (the
// expected strings are what repr(), _sql_output.arrow_double and str(Decimal) give), and the three
// formats of a small result.
#include "jaxprof/render/text/sql_render.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

namespace jaxprof {
namespace {

TEST(SqlRender, DoublesAsPythonRepr) {
  EXPECT_EQ(python_float_repr(1.0), "1.0");
  EXPECT_EQ(python_float_repr(0.1), "0.1");
  EXPECT_EQ(python_float_repr(1e-5), "1e-05");
  EXPECT_EQ(python_float_repr(1e-4), "0.0001");
  EXPECT_EQ(python_float_repr(1e16), "1e+16");
  EXPECT_EQ(python_float_repr(1e15), "1000000000000000.0");
  EXPECT_EQ(python_float_repr(123456789012345678.0), "1.2345678901234568e+17");
  EXPECT_EQ(python_float_repr(1.5e300), "1.5e+300");
  EXPECT_EQ(python_float_repr(5e-324), "5e-324");
  EXPECT_EQ(python_float_repr(-0.0), "-0.0");
  EXPECT_EQ(python_float_repr(-1234.5), "-1234.5");
  EXPECT_EQ(python_float_repr(1.0 / 3), "0.3333333333333333");
  EXPECT_EQ(python_float_repr(std::nan("")), "nan");
  EXPECT_EQ(python_float_repr(-std::numeric_limits<double>::infinity()), "-inf");
}

TEST(SqlRender, DoublesAsArrowCsv) {
  EXPECT_EQ(arrow_csv_double(1.0), "1");
  EXPECT_EQ(arrow_csv_double(1e-5), "0.00001");
  EXPECT_EQ(arrow_csv_double(1e-6), "0.000001");
  EXPECT_EQ(arrow_csv_double(1e-7), "1e-7");
  EXPECT_EQ(arrow_csv_double(1e9), "1000000000");
  EXPECT_EQ(arrow_csv_double(9999999999.0), "9999999999");
  EXPECT_EQ(arrow_csv_double(1e10), "1e+10");
  EXPECT_EQ(arrow_csv_double(12345678901.0), "1.2345678901e+10");
  EXPECT_EQ(arrow_csv_double(1e15), "1e+15");
  EXPECT_EQ(arrow_csv_double(1e21), "1e+21");
  EXPECT_EQ(arrow_csv_double(-0.0), "-0");
  EXPECT_EQ(arrow_csv_double(-1234.5), "-1234.5");
  EXPECT_EQ(arrow_csv_double(std::nan("")), "nan");
  EXPECT_EQ(arrow_csv_double(std::numeric_limits<double>::infinity()), "inf");
}

TEST(SqlRender, DecimalsAsPython) {
  // str(Decimal): plain while the first digit is above the 6th place after the point.
  EXPECT_EQ(python_decimal_text(0, 10), "0E-10");
  EXPECT_EQ(python_decimal_text(-1234500, 4), "-123.4500");
  EXPECT_EQ(python_decimal_text(1234567891, 3), "1234567.891");
  EXPECT_EQ(python_decimal_text(1, 8), "1E-8");
  EXPECT_EQ(python_decimal_text(1, 6), "0.000001");
  EXPECT_EQ(python_decimal_text(-1, 7), "-1E-7");
  EXPECT_EQ(python_decimal_text(12, 0), "12");
  EXPECT_EQ(python_decimal_text(125, 2), "1.25");
  // JSON: whole values as integers, others as the nearest double.
  EXPECT_EQ(python_decimal_json(0, 10), "0");
  EXPECT_EQ(python_decimal_json(-1234500, 4), "-123.45");
  EXPECT_EQ(python_decimal_json(1, 8), "1e-08");
  EXPECT_EQ(python_decimal_json(-1, 7), "-1e-07");
  EXPECT_EQ(python_decimal_json(10000, 2), "100");
  const __int128 big = static_cast<__int128>(1) << 100;
  EXPECT_EQ(python_decimal_json(big * 100, 2), "1267650600228229401496703205376");
  EXPECT_EQ(int128_text(-big), "-1267650600228229401496703205376");
}

SqlResult small_result() {
  SqlResult r;
  r.rows = 2;
  SqlColumn name{"name", SqlType::kVarchar};
  name.s = {"a\"b,c", "é😀  "};
  name.valid = {1, 1};
  SqlColumn total{"total", SqlType::kInteger};
  total.i = {12, 0};
  total.valid = {1, 0};
  SqlColumn share{"share", SqlType::kDouble};
  share.f = {0.5, 1e-7};
  share.valid = {1, 1};
  SqlColumn ok{"ok", SqlType::kBool};
  ok.i = {1, 0};
  ok.valid = {1, 1};
  r.columns = {name, total, share, ok};
  return r;
}

TEST(SqlRender, JsonAsPythonDumps) {
  EXPECT_EQ(render_sql_json(small_result()),
            "[{\"name\": \"a\\\"b,c\", \"total\": 12, \"share\": 0.5, \"ok\": true}, "
            "{\"name\": \"\\u00e9\\ud83d\\ude00  \", \"total\": null, \"share\": 1e-07, "
            "\"ok\": false}]\n");
  EXPECT_EQ(render_sql_json(SqlResult{}), "[]\n");
}

TEST(SqlRender, CsvAsPyarrow) {
  EXPECT_EQ(render_sql_csv(small_result()),
            "\"name\",\"total\",\"share\",\"ok\"\n"
            "\"a\"\"b,c\",12,0.5,true\n"
            "\"é😀  \",,1e-7,false\n");
}

TEST(SqlRender, TableAlignsByCodePoints) {
  // Widths count characters, not bytes; strings go left, numbers and booleans right; each line
  // loses its trailing whitespace as str.rstrip() takes it.
  EXPECT_EQ(render_sql_table(small_result()),
            "name   total  share     ok\n"
            "-----  -----  -----  -----\n"
            "a\"b,c     12    0.5   True\n"
            "é😀            1e-07  False\n"
            "(2 rows)\n");
}

}  // namespace
}  // namespace jaxprof
