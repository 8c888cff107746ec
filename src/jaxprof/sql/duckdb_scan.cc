#include "jaxprof/sql/duckdb_scan.h"

#include <algorithm>
#include <cstring>
#include <exception>
#include <mutex>
#include <vector>

namespace jaxprof {
namespace {

// A table as the table function scans it, with a vector per string column holding its
// dictionary and, last, a null: a vector of the column is that vector sliced by the rows' codes.
// Each is made when a scan first reads its column (scans of one table may run at once).
struct ScanTable {
  const duckdb_c::Api& api;
  std::shared_ptr<const RecordTable> table;

  ScanTable(const duckdb_c::Api& a, std::shared_ptr<const RecordTable> t)
      : api(a), table(std::move(t)), dictionaries_(table->columns.size(), nullptr) {}
  ~ScanTable() {
    for (duckdb_c::vector& v : dictionaries_)
      if (v != nullptr) api.destroy_vector(&v);
  }
  ScanTable(const ScanTable&) = delete;
  ScanTable& operator=(const ScanTable&) = delete;

  duckdb_c::vector dictionary(size_t column);

 private:
  std::mutex mutex_;
  std::vector<duckdb_c::vector> dictionaries_;  // per column; null until read, or not a string
};

}  // namespace

struct DuckDbTables::Registry {
  const duckdb_c::Api& api;
  std::vector<std::unique_ptr<ScanTable>> tables;
};

namespace {

constexpr const char* kScanFunction = "jaxprof_table";

duckdb_c::type duckdb_type_of(TableType t) {
  switch (t) {
    case TableType::kInt64:
      return duckdb_c::kBigint;
    case TableType::kUInt64:
      return duckdb_c::kUBigint;
    case TableType::kDouble:
      return duckdb_c::kDouble;
    case TableType::kBool:
      return duckdb_c::kBoolean;
    case TableType::kString:
      return duckdb_c::kVarchar;
  }
  return duckdb_c::kBigint;
}

duckdb_c::vector dictionary_vector(const duckdb_c::Api& api, const RecordColumn& c) {
  duckdb_c::logical_type varchar = api.create_logical_type(duckdb_c::kVarchar);
  duckdb_c::vector v = api.create_vector(varchar, c.dictionary.size() + 1);
  api.destroy_logical_type(&varchar);
  for (size_t i = 0; i < c.dictionary.size(); ++i)
    api.vector_assign_string_element_len(v, i, c.dictionary[i].data(), c.dictionary[i].size());
  api.vector_ensure_validity_writable(v);
  api.validity_set_row_invalid(api.vector_get_validity(v), c.dictionary.size());
  return v;
}

duckdb_c::vector ScanTable::dictionary(size_t column) {
  std::lock_guard<std::mutex> lock(mutex_);
  duckdb_c::vector& v = dictionaries_[column];
  if (v == nullptr) v = dictionary_vector(api, table->columns[column]);
  return v;
}

// A scan's state: the table's columns it reads, in the order of the output's vectors, and the
// next row. One thread per scan, so that rows come in the table's order as from the Python
// package's Arrow scan.
struct ScanState {
  std::vector<uint64_t> columns;
  size_t next = 0;
};

// The library the callbacks call back into: one per process (the callbacks get no other way to
// it before they have read their own data).
const duckdb_c::Api* callback_api = nullptr;

// bind(): the table named by the argument, its columns and their types.
void bind_table(duckdb_c::bind_info info) {
  const duckdb_c::Api& api = *callback_api;
  auto& registry = *static_cast<DuckDbTables::Registry*>(api.bind_get_extra_info(info));
  duckdb_c::value arg = api.bind_get_parameter(info, 0);
  char* name = api.get_varchar(arg);
  ScanTable* found = nullptr;
  for (auto& t : registry.tables)
    if (t->table->name == name) found = t.get();
  api.free(name);
  api.destroy_value(&arg);
  if (found == nullptr) {
    api.bind_set_error(info, "no such table of the profile");
    return;
  }
  for (const RecordColumn& c : found->table->columns) {
    duckdb_c::logical_type t = api.create_logical_type(duckdb_type_of(c.type));
    api.bind_add_result_column(info, c.name.c_str(), t);
    api.destroy_logical_type(&t);
  }
  api.bind_set_bind_data(info, found, nullptr);  // the registry owns it
  api.bind_set_cardinality(info, found->table->rows, true);
}

void delete_scan_state(void* p) { delete static_cast<ScanState*>(p); }

void init_scan(duckdb_c::init_info info) {
  const duckdb_c::Api& api = *callback_api;
  auto* state = new ScanState;
  for (duckdb_c::idx_t i = 0, n = api.init_get_column_count(info); i < n; ++i)
    state->columns.push_back(api.init_get_column_index(info, i));
  api.init_set_init_data(info, state, delete_scan_state);
  api.init_set_max_threads(info, 1);
}

// A string column's rows [start, start + n) as its dictionary sliced by their codes.
void fill_strings(const duckdb_c::Api& api, duckdb_c::vector out, duckdb_c::vector dictionary,
                  const RecordColumn& c, size_t start, size_t n) {
  duckdb_c::selection_vector sel = api.create_selection_vector(n);
  duckdb_c::sel_t* codes = api.selection_vector_get_data_ptr(sel);
  const auto null_code = static_cast<duckdb_c::sel_t>(c.dictionary.size());
  for (size_t r = 0; r < n; ++r)
    codes[r] = c.is_null(start + r) ? null_code : static_cast<duckdb_c::sel_t>(c.codes[start + r]);
  api.vector_reference_vector(out, dictionary);
  api.slice_vector(out, sel, n);
  api.destroy_selection_vector(sel);
}

// Another column's rows [start, start + n): the values copied, then the nulls marked.
void fill_values(const duckdb_c::Api& api, duckdb_c::vector out, const RecordColumn& c,
                 size_t start, size_t n) {
  void* data = api.vector_get_data(out);
  switch (c.type) {
    case TableType::kInt64:
      std::memcpy(data, c.i64.data() + start, n * sizeof(int64_t));
      break;
    case TableType::kUInt64:
      std::memcpy(data, c.u64.data() + start, n * sizeof(uint64_t));
      break;
    case TableType::kDouble:
      std::memcpy(data, c.f64.data() + start, n * sizeof(double));
      break;
    case TableType::kBool:
      std::memcpy(data, c.b.data() + start, n);
      break;
    case TableType::kString:
      break;
  }
  if (c.null_count == 0) return;
  api.vector_ensure_validity_writable(out);
  uint64_t* validity = api.vector_get_validity(out);
  for (size_t r = 0; r < n; ++r)
    if (c.is_null(start + r)) api.validity_set_row_invalid(validity, r);
}

void fill_rows(duckdb_c::function_info info, duckdb_c::data_chunk out) {
  const duckdb_c::Api& api = *callback_api;
  auto& t = *static_cast<ScanTable*>(api.function_get_bind_data(info));
  auto& state = *static_cast<ScanState*>(api.function_get_init_data(info));
  const RecordTable& table = *t.table;
  const size_t start = state.next;
  const size_t n = std::min<size_t>(api.vector_size(), table.rows - std::min(table.rows, start));
  for (size_t i = 0; i < state.columns.size(); ++i) {
    duckdb_c::vector v = api.data_chunk_get_vector(out, i);
    const uint64_t column = state.columns[i];
    if (column >= table.columns.size()) {  // the row id
      auto* ids = static_cast<int64_t*>(api.vector_get_data(v));
      for (size_t r = 0; r < n; ++r) ids[r] = static_cast<int64_t>(start + r);
    } else if (table.columns[column].type == TableType::kString) {
      fill_strings(api, v, t.dictionary(column), table.columns[column], start, n);
    } else {
      fill_values(api, v, table.columns[column], start, n);
    }
  }
  api.data_chunk_set_size(out, n);
  state.next += n;
}

// The callbacks DuckDB calls: no exception may cross into its C frames (the only one possible
// here is running out of memory), so each becomes the query's error.
void scan_bind(duckdb_c::bind_info info) {
  try {
    bind_table(info);
  } catch (const std::exception& e) {
    callback_api->bind_set_error(info, e.what());
  }
}

void scan_init(duckdb_c::init_info info) {
  try {
    init_scan(info);
  } catch (const std::exception& e) {
    callback_api->init_set_error(info, e.what());
  }
}

void scan_rows(duckdb_c::function_info info, duckdb_c::data_chunk out) {
  try {
    fill_rows(info, out);
  } catch (const std::exception& e) {
    callback_api->function_set_error(info, e.what());
  }
}

}  // namespace

DuckDbTables::DuckDbTables(const duckdb_c::Api& api)
    : registry_(std::make_unique<Registry>(Registry{api, {}})) {}

DuckDbTables::~DuckDbTables() = default;

bool DuckDbTables::register_function(duckdb_c::connection con, std::string& why_not) {
  const duckdb_c::Api& api = registry_->api;
  callback_api = &api;
  duckdb_c::table_function f = api.create_table_function();
  api.table_function_set_name(f, kScanFunction);
  duckdb_c::logical_type varchar = api.create_logical_type(duckdb_c::kVarchar);
  api.table_function_add_parameter(f, varchar);
  api.destroy_logical_type(&varchar);
  api.table_function_set_extra_info(f, registry_.get(), nullptr);
  api.table_function_set_bind(f, scan_bind);
  api.table_function_set_init(f, scan_init);
  api.table_function_set_function(f, scan_rows);
  api.table_function_supports_projection_pushdown(f, true);
  const bool registered = api.register_table_function(con, f) == duckdb_c::kSuccess;
  api.destroy_table_function(&f);
  if (!registered) why_not = "DuckDB did not register the table function";
  return registered;
}

std::string DuckDbTables::add(std::shared_ptr<const RecordTable> table) {
  const duckdb_c::Api& api = registry_->api;
  auto& t = *registry_->tables.emplace_back(std::make_unique<ScanTable>(api, std::move(table)));
  return "CREATE TEMPORARY VIEW \"" + t.table->name + "\" AS SELECT * FROM " + kScanFunction +
         "('" + t.table->name + "')";
}

}  // namespace jaxprof
