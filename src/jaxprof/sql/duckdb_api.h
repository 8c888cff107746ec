// DuckDB's C API, found and loaded at run time: the few functions and types `jaxprof sql` uses,
// declared here from DuckDB's documented C API (duckdb.h is installed by no package this project
// builds with). DuckDB's Python wheel exports the whole C API from its extension module
// (_duckdb.cpython-*.so); the module's Python symbols are left unresolved, so libpython is loaded
// first (RTLD_GLOBAL, no interpreter started: the C API never calls into Python). A plain
// libduckdb.so loads on its own.
//
// Where: JAXPROF_DUCKDB_LIBRARY (a libduckdb.so or the wheel's module) and
// JAXPROF_DUCKDB_LIBPYTHON, else what the build found from its Python interpreter (CMakeLists.txt:
// import duckdb's module and sysconfig's LIBDIR/INSTSONAME).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace jaxprof::duckdb_c {

using idx_t = uint64_t;
using database = struct database_handle*;      // duckdb_database
using connection = struct connection_handle*;  // duckdb_connection
using data_chunk = struct data_chunk_handle*;  // duckdb_data_chunk
using vector = struct vector_handle*;          // duckdb_vector
using logical_type = struct logical_type_handle*;
using value = struct value_handle*;
using selection_vector = struct selection_vector_handle*;
using table_function = struct table_function_handle*;
using bind_info = struct bind_info_handle*;
using init_info = struct init_info_handle*;
using function_info = struct function_info_handle*;
using delete_callback = void (*)(void*);
using bind_callback = void (*)(bind_info);
using init_callback = void (*)(init_info);
using scan_callback = void (*)(function_info, data_chunk);
using sel_t = uint32_t;
using extracted_statements = struct extracted_statements_handle*;

enum state : int { kSuccess = 0, kError = 1 };

// duckdb_type: the values DuckDB's C API numbers its types with.
enum type : int {
  kBoolean = 1,
  kTinyint = 2,
  kSmallint = 3,
  kInteger = 4,
  kBigint = 5,
  kUTinyint = 6,
  kUSmallint = 7,
  kUInteger = 8,
  kUBigint = 9,
  kFloat = 10,
  kDouble = 11,
  kHugeint = 16,
  kVarchar = 17,
  kDecimal = 19,
};

enum statement_type : int { kStatementSelect = 1 };

// duckdb_result: its fields are DuckDB's own; only its size matters here.
struct result {
  idx_t deprecated_column_count;
  idx_t deprecated_row_count;
  idx_t deprecated_rows_changed;
  void* deprecated_columns;
  char* deprecated_error_message;
  void* internal_data;
};

struct hugeint {
  uint64_t lower;
  int64_t upper;
};

// duckdb_string_t: the length, then up to 12 bytes inline, else a 4-byte prefix and a pointer.
struct string_t {
  uint32_t length;
  char prefix[4];
  const char* ptr;
  const char* data() const {
    return length <= 12 ? reinterpret_cast<const char*>(this) + sizeof(length) : ptr;
  }
};
static_assert(sizeof(string_t) == 16);

struct Api {
  state (*open)(const char* path, database* out);
  void (*close)(database* db);
  state (*connect)(database db, connection* out);
  void (*disconnect)(connection* con);
  state (*query)(connection con, const char* sql, result* out);
  idx_t (*extract_statements)(connection con, const char* sql, extracted_statements* out);
  void (*destroy_extracted)(extracted_statements* statements);
  void (*destroy_result)(result* r);
  const char* (*result_error)(result* r);
  statement_type (*result_statement_type)(result r);
  idx_t (*column_count)(result* r);
  const char* (*column_name)(result* r, idx_t col);
  logical_type (*column_logical_type)(result* r, idx_t col);
  type (*get_type_id)(logical_type t);
  char* (*logical_type_get_alias)(logical_type t);
  uint8_t (*decimal_scale)(logical_type t);
  type (*decimal_internal_type)(logical_type t);
  void (*destroy_logical_type)(logical_type* t);
  data_chunk (*fetch_chunk)(result r);
  idx_t (*data_chunk_get_size)(data_chunk c);
  vector (*data_chunk_get_vector)(data_chunk c, idx_t col);
  void (*destroy_data_chunk)(data_chunk* c);
  void* (*vector_get_data)(vector v);
  uint64_t* (*vector_get_validity)(vector v);
  void (*free)(void* p);
  const char* (*library_version)();

  // The table function that scans the profile's tables (duckdb_session.cc).
  table_function (*create_table_function)();
  void (*destroy_table_function)(table_function* f);
  void (*table_function_set_name)(table_function f, const char* name);
  void (*table_function_add_parameter)(table_function f, logical_type t);
  void (*table_function_set_extra_info)(table_function f, void* info, delete_callback destroy);
  void (*table_function_set_bind)(table_function f, bind_callback bind);
  void (*table_function_set_init)(table_function f, init_callback init);
  void (*table_function_set_function)(table_function f, scan_callback scan);
  void (*table_function_supports_projection_pushdown)(table_function f, bool pushdown);
  state (*register_table_function)(connection con, table_function f);
  void* (*bind_get_extra_info)(bind_info info);
  value (*bind_get_parameter)(bind_info info, idx_t index);
  void (*bind_add_result_column)(bind_info info, const char* name, logical_type t);
  void (*bind_set_bind_data)(bind_info info, void* data, delete_callback destroy);
  void (*bind_set_cardinality)(bind_info info, idx_t rows, bool exact);
  void (*bind_set_error)(bind_info info, const char* error);
  void* (*init_get_bind_data)(init_info info);
  void (*init_set_init_data)(init_info info, void* data, delete_callback destroy);
  idx_t (*init_get_column_count)(init_info info);
  idx_t (*init_get_column_index)(init_info info, idx_t i);
  void (*init_set_max_threads)(init_info info, idx_t threads);
  void (*init_set_error)(init_info info, const char* error);
  void* (*function_get_bind_data)(function_info info);
  void* (*function_get_init_data)(function_info info);
  void (*function_set_error)(function_info info, const char* error);
  char* (*get_varchar)(value v);
  void (*destroy_value)(value* v);
  logical_type (*create_logical_type)(type t);
  void (*data_chunk_set_size)(data_chunk c, idx_t size);
  idx_t (*vector_size)();
  void (*vector_ensure_validity_writable)(vector v);
  void (*vector_assign_string_element_len)(vector v, idx_t row, const char* s, idx_t len);
  void (*validity_set_row_invalid)(uint64_t* validity, idx_t row);
  vector (*create_vector)(logical_type t, idx_t capacity);
  void (*destroy_vector)(vector* v);
  void (*vector_reference_vector)(vector to, vector from);
  void (*slice_vector)(vector v, selection_vector sel, idx_t count);
  selection_vector (*create_selection_vector)(idx_t size);
  void (*destroy_selection_vector)(selection_vector sel);
  sel_t* (*selection_vector_get_data_ptr)(selection_vector sel);
};

// The library's path and, for the wheel's module, libpython's: from the environment, else the
// build's defaults (empty where the build found none).
struct Location {
  std::string library, libpython;
};
Location default_location();

// Loads the library (and libpython before it when it is Python's module) and every function of
// Api. Returns null with `why_not` set when a file is missing or does not load, or a function is
// not exported.
std::unique_ptr<Api> load(const Location& where, std::string& why_not);

}  // namespace jaxprof::duckdb_c
