#include "jaxprof/sql/duckdb_api.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include <cstdlib>
#include <string_view>

// Set by CMakeLists.txt from the build's Python interpreter; empty when it found no DuckDB.
#ifndef JAXPROF_DUCKDB_LIBRARY_DEFAULT
#define JAXPROF_DUCKDB_LIBRARY_DEFAULT ""
#endif
#ifndef JAXPROF_DUCKDB_LIBPYTHON_DEFAULT
#define JAXPROF_DUCKDB_LIBPYTHON_DEFAULT ""
#endif

namespace jaxprof::duckdb_c {
namespace {

std::string env_or(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

bool is_file(const std::string& path) {
  struct stat st {};
  return !path.empty() && ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// A library named libduckdb* is DuckDB's own and needs no Python; anything else is taken for the
// wheel's extension module.
bool is_plain_library(std::string_view path) {
  const size_t slash = path.rfind('/');
  return path.substr(slash == std::string_view::npos ? 0 : slash + 1).starts_with("libduckdb");
}

template <typename F>
bool bind(void* handle, const char* name, F& out, std::string& why_not) {
  void* p = ::dlsym(handle, name);
  if (p == nullptr) {
    why_not = std::string("the library exports no ") + name;
    return false;
  }
  out = reinterpret_cast<F>(p);
  return true;
}

// What the table function needs.
bool bind_scan(void* h, Api& a, std::string& w) {
  return bind(h, "duckdb_create_table_function", a.create_table_function, w) &&
         bind(h, "duckdb_destroy_table_function", a.destroy_table_function, w) &&
         bind(h, "duckdb_table_function_set_name", a.table_function_set_name, w) &&
         bind(h, "duckdb_table_function_add_parameter", a.table_function_add_parameter, w) &&
         bind(h, "duckdb_table_function_set_extra_info", a.table_function_set_extra_info, w) &&
         bind(h, "duckdb_table_function_set_bind", a.table_function_set_bind, w) &&
         bind(h, "duckdb_table_function_set_init", a.table_function_set_init, w) &&
         bind(h, "duckdb_table_function_set_function", a.table_function_set_function, w) &&
         bind(h, "duckdb_table_function_supports_projection_pushdown",
              a.table_function_supports_projection_pushdown, w) &&
         bind(h, "duckdb_register_table_function", a.register_table_function, w) &&
         bind(h, "duckdb_bind_get_extra_info", a.bind_get_extra_info, w) &&
         bind(h, "duckdb_bind_get_parameter", a.bind_get_parameter, w) &&
         bind(h, "duckdb_bind_add_result_column", a.bind_add_result_column, w) &&
         bind(h, "duckdb_bind_set_bind_data", a.bind_set_bind_data, w) &&
         bind(h, "duckdb_bind_set_cardinality", a.bind_set_cardinality, w) &&
         bind(h, "duckdb_bind_set_error", a.bind_set_error, w) &&
         bind(h, "duckdb_init_get_bind_data", a.init_get_bind_data, w) &&
         bind(h, "duckdb_init_set_init_data", a.init_set_init_data, w) &&
         bind(h, "duckdb_init_get_column_count", a.init_get_column_count, w) &&
         bind(h, "duckdb_init_get_column_index", a.init_get_column_index, w) &&
         bind(h, "duckdb_init_set_max_threads", a.init_set_max_threads, w) &&
         bind(h, "duckdb_init_set_error", a.init_set_error, w) &&
         bind(h, "duckdb_function_get_bind_data", a.function_get_bind_data, w) &&
         bind(h, "duckdb_function_get_init_data", a.function_get_init_data, w) &&
         bind(h, "duckdb_function_set_error", a.function_set_error, w) &&
         bind(h, "duckdb_get_varchar", a.get_varchar, w) &&
         bind(h, "duckdb_destroy_value", a.destroy_value, w) &&
         bind(h, "duckdb_create_logical_type", a.create_logical_type, w) &&
         bind(h, "duckdb_data_chunk_set_size", a.data_chunk_set_size, w) &&
         bind(h, "duckdb_vector_size", a.vector_size, w) &&
         bind(h, "duckdb_vector_ensure_validity_writable", a.vector_ensure_validity_writable, w) &&
         bind(h, "duckdb_vector_assign_string_element_len", a.vector_assign_string_element_len,
              w) &&
         bind(h, "duckdb_validity_set_row_invalid", a.validity_set_row_invalid, w) &&
         bind(h, "duckdb_create_vector", a.create_vector, w) &&
         bind(h, "duckdb_destroy_vector", a.destroy_vector, w) &&
         bind(h, "duckdb_vector_reference_vector", a.vector_reference_vector, w) &&
         bind(h, "duckdb_slice_vector", a.slice_vector, w) &&
         bind(h, "duckdb_create_selection_vector", a.create_selection_vector, w) &&
         bind(h, "duckdb_destroy_selection_vector", a.destroy_selection_vector, w) &&
         bind(h, "duckdb_selection_vector_get_data_ptr", a.selection_vector_get_data_ptr, w);
}

bool bind_all(void* h, Api& a, std::string& w) {
  return bind(h, "duckdb_open", a.open, w) && bind(h, "duckdb_close", a.close, w) &&
         bind(h, "duckdb_connect", a.connect, w) && bind(h, "duckdb_disconnect", a.disconnect, w) &&
         bind(h, "duckdb_query", a.query, w) &&
         bind(h, "duckdb_extract_statements", a.extract_statements, w) &&
         bind(h, "duckdb_destroy_extracted", a.destroy_extracted, w) &&
         bind(h, "duckdb_destroy_result", a.destroy_result, w) &&
         bind(h, "duckdb_result_error", a.result_error, w) &&
         bind(h, "duckdb_result_statement_type", a.result_statement_type, w) &&
         bind(h, "duckdb_column_count", a.column_count, w) &&
         bind(h, "duckdb_column_name", a.column_name, w) &&
         bind(h, "duckdb_column_logical_type", a.column_logical_type, w) &&
         bind(h, "duckdb_get_type_id", a.get_type_id, w) &&
         bind(h, "duckdb_logical_type_get_alias", a.logical_type_get_alias, w) &&
         bind(h, "duckdb_decimal_scale", a.decimal_scale, w) &&
         bind(h, "duckdb_decimal_internal_type", a.decimal_internal_type, w) &&
         bind(h, "duckdb_destroy_logical_type", a.destroy_logical_type, w) &&
         bind(h, "duckdb_fetch_chunk", a.fetch_chunk, w) &&
         bind(h, "duckdb_data_chunk_get_size", a.data_chunk_get_size, w) &&
         bind(h, "duckdb_data_chunk_get_vector", a.data_chunk_get_vector, w) &&
         bind(h, "duckdb_destroy_data_chunk", a.destroy_data_chunk, w) &&
         bind(h, "duckdb_vector_get_data", a.vector_get_data, w) &&
         bind(h, "duckdb_vector_get_validity", a.vector_get_validity, w) &&
         bind(h, "duckdb_free", a.free, w) &&
         bind(h, "duckdb_library_version", a.library_version, w) && bind_scan(h, a, w);
}

}  // namespace

Location default_location() {
  return {env_or("JAXPROF_DUCKDB_LIBRARY", JAXPROF_DUCKDB_LIBRARY_DEFAULT),
          env_or("JAXPROF_DUCKDB_LIBPYTHON", JAXPROF_DUCKDB_LIBPYTHON_DEFAULT)};
}

std::unique_ptr<Api> load(const Location& where, std::string& why_not) {
  if (where.library.empty()) {
    why_not = "no DuckDB library known (JAXPROF_DUCKDB_LIBRARY)";
    return nullptr;
  }
  if (!is_file(where.library)) {
    why_not = "no file " + where.library;
    return nullptr;
  }
  if (!is_plain_library(where.library) && !where.libpython.empty()) {
    // The module's Python symbols resolve against it; it is never initialised. Loaded for the
    // life of the process, as the DuckDB library is.
    if (::dlopen(where.libpython.c_str(), RTLD_LAZY | RTLD_GLOBAL) == nullptr) {
      why_not = std::string("cannot load libpython: ") + ::dlerror();
      return nullptr;
    }
  }
  void* handle = ::dlopen(where.library.c_str(), RTLD_LAZY | RTLD_LOCAL);
  if (handle == nullptr) {
    why_not = std::string("cannot load DuckDB: ") + ::dlerror();
    return nullptr;
  }
  auto api = std::make_unique<Api>();
  if (!bind_all(handle, *api, why_not)) return nullptr;
  return api;
}

}  // namespace jaxprof::duckdb_c
