// `jaxprof sql`'s output from a query's rows: JSON, CSV and the aligned text table, byte for byte
// what the Python package writes (python/jaxprof/_sql_output.py, from DuckDB's fetchall) for the
// column types it handles there: integers of every width, hugeint, double, varchar, boolean and
// decimal. The numbers are written as Python and Arrow write them: a double in JSON and the text
// table as Python's repr, in CSV as Arrow's CSV writer; a decimal as Python's Decimal prints it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace jaxprof {

// A column of a query's result. Integers of every width are held as 128-bit values, decimals as
// their unscaled value (the number times 10^scale).
enum class SqlType : uint8_t { kBool, kInteger, kDouble, kVarchar, kDecimal };

struct SqlColumn {
  std::string name;
  SqlType type = SqlType::kInteger;
  uint8_t scale = 0;           // kDecimal: digits after the point
  std::vector<__int128> i;     // kBool (0/1), kInteger, kDecimal
  std::vector<double> f;       // kDouble
  std::vector<std::string> s;  // kVarchar
  std::vector<uint8_t> valid;  // one per row: 0 for a null

  size_t size() const { return valid.size(); }
};

struct SqlResult {
  std::vector<SqlColumn> columns;
  size_t rows = 0;
};

// An array of one object per row (json.dumps of the rows as dicts: names repeated in a result
// keep the first one's place and the last one's value), then a newline.
std::string render_sql_json(const SqlResult& r);
// pyarrow.csv.write_csv's CSV: every name and string quoted, nulls empty.
std::string render_sql_csv(const SqlResult& r);
// The columns aligned (numbers to the right), a rule, the rows, then "(N rows)".
std::string render_sql_table(const SqlResult& r);

// The numbers, as the Python path writes them (exposed for the tests).
std::string int128_text(__int128 v);
std::string python_float_repr(double x);  // repr(float): 1.0, 1e-05, 1e+16, nan, inf
std::string arrow_csv_double(double x);   // _sql_output.arrow_double: 1, 1e-07, 1e+21, nan, inf
std::string python_decimal_text(__int128 unscaled, unsigned scale);  // str(Decimal): 0E-10
// json_value(Decimal): whole values as integers, others as the nearest double's repr.
std::string python_decimal_json(__int128 unscaled, unsigned scale);

}  // namespace jaxprof
