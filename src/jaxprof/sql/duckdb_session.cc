#include "jaxprof/sql/duckdb_session.h"

#include <cctype>

#include "jaxprof/analysis/tables/tables.h"

namespace jaxprof {
namespace {

bool word_byte(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' ||
         static_cast<unsigned char>(c) >= 0x80;
}

// How a result column's DuckDB type is held, or false for a type the Python package renders.
bool column_kind(const duckdb_c::Api& api, duckdb_c::logical_type t, SqlColumn& c,
                 duckdb_c::type& storage, std::string& why_not) {
  if (char* alias = api.logical_type_get_alias(t)) {  // JSON and other named types
    why_not = std::string("the result has a column of type ") + alias;
    api.free(alias);
    return false;
  }
  storage = api.get_type_id(t);
  switch (storage) {
    case duckdb_c::kBoolean:
      c.type = SqlType::kBool;
      return true;
    case duckdb_c::kTinyint:
    case duckdb_c::kSmallint:
    case duckdb_c::kInteger:
    case duckdb_c::kBigint:
    case duckdb_c::kUTinyint:
    case duckdb_c::kUSmallint:
    case duckdb_c::kUInteger:
    case duckdb_c::kUBigint:
    case duckdb_c::kHugeint:
      c.type = SqlType::kInteger;
      return true;
    case duckdb_c::kDouble:
      c.type = SqlType::kDouble;
      return true;
    case duckdb_c::kVarchar:
      c.type = SqlType::kVarchar;
      return true;
    case duckdb_c::kDecimal:
      c.type = SqlType::kDecimal;
      c.scale = api.decimal_scale(t);
      storage = api.decimal_internal_type(t);  // smallint, integer, bigint or hugeint
      return true;
    default:
      why_not = "the result has a column of DuckDB type " + std::to_string(storage);
      return false;
  }
}

// The integer in row `r` of a vector whose values are `storage`.
__int128 integer_at(const void* data, duckdb_c::type storage, size_t r) {
  switch (storage) {
    case duckdb_c::kBoolean:
    case duckdb_c::kUTinyint:
      return static_cast<const uint8_t*>(data)[r];
    case duckdb_c::kTinyint:
      return static_cast<const int8_t*>(data)[r];
    case duckdb_c::kSmallint:
      return static_cast<const int16_t*>(data)[r];
    case duckdb_c::kUSmallint:
      return static_cast<const uint16_t*>(data)[r];
    case duckdb_c::kInteger:
      return static_cast<const int32_t*>(data)[r];
    case duckdb_c::kUInteger:
      return static_cast<const uint32_t*>(data)[r];
    case duckdb_c::kBigint:
      return static_cast<const int64_t*>(data)[r];
    case duckdb_c::kUBigint:
      return static_cast<const uint64_t*>(data)[r];
    default: {
      const auto& h = static_cast<const duckdb_c::hugeint*>(data)[r];
      return static_cast<__int128>(static_cast<unsigned __int128>(h.upper) << 64 | h.lower);
    }
  }
}

void append_chunk(const duckdb_c::Api& api, duckdb_c::data_chunk chunk,
                  const std::vector<duckdb_c::type>& storage, SqlResult& out) {
  const size_t n = api.data_chunk_get_size(chunk);
  for (size_t col = 0; col < out.columns.size(); ++col) {
    SqlColumn& c = out.columns[col];
    duckdb_c::vector v = api.data_chunk_get_vector(chunk, col);
    const void* data = api.vector_get_data(v);
    const uint64_t* validity = api.vector_get_validity(v);  // null: every row present
    for (size_t r = 0; r < n; ++r) {
      const bool valid = validity == nullptr || (validity[r >> 6] >> (r & 63) & 1) != 0;
      c.valid.push_back(valid ? 1 : 0);
      if (c.type == SqlType::kDouble) {
        c.f.push_back(valid ? static_cast<const double*>(data)[r] : 0.0);
      } else if (c.type == SqlType::kVarchar) {
        const auto& s = static_cast<const duckdb_c::string_t*>(data)[r];
        c.s.emplace_back(valid ? std::string(s.data(), s.length) : std::string());
      } else {
        c.i.push_back(valid ? integer_at(data, storage[col], r) : 0);
      }
    }
  }
  out.rows += n;
}

// The rows of a successful query, or kUnsupported.
DuckDbSession::Outcome read_result(const duckdb_c::Api& api, duckdb_c::result& r) {
  DuckDbSession::Outcome out;
  if (api.result_statement_type(r) != duckdb_c::kStatementSelect) {
    out.kind = DuckDbSession::Outcome::kUnsupported;
    out.message = "the statement is not a SELECT";
    return out;
  }
  const size_t n = api.column_count(&r);
  std::vector<duckdb_c::type> storage(n);
  out.rows.columns.resize(n);
  for (size_t col = 0; col < n; ++col) {
    SqlColumn& c = out.rows.columns[col];
    c.name = api.column_name(&r, col);
    duckdb_c::logical_type t = api.column_logical_type(&r, col);
    const bool known = column_kind(api, t, c, storage[col], out.message);
    api.destroy_logical_type(&t);
    if (!known) {
      out.kind = DuckDbSession::Outcome::kUnsupported;
      return out;
    }
  }
  while (duckdb_c::data_chunk chunk = api.fetch_chunk(r)) {
    append_chunk(api, chunk, storage, out.rows);
    api.destroy_data_chunk(&chunk);
  }
  return out;
}

// DuckDB's message as its Python module gives it: a query whose binding fails there (a column or
// table not found) is bound with no text to point into, so its message has no "LINE 1: ..." part
// under it; errors from parsing and running keep theirs.
std::string python_message(std::string message) {
  if (!message.starts_with("Binder Error: ") && !message.starts_with("Catalog Error: "))
    return message;
  const size_t at = message.rfind("\n\nLINE ");
  if (at != std::string::npos && message.find('^', at) != std::string::npos) message.resize(at);
  return message;
}

}  // namespace

std::vector<std::string> tables_named_in(std::string_view query) {
  std::string lower(query);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::vector<std::string> out;
  for (const TableInfo& t : table_list()) {
    const std::string_view name = t.name;
    for (size_t at = lower.find(name); at != std::string::npos; at = lower.find(name, at + 1)) {
      const size_t end = at + name.size();
      if ((at == 0 || !word_byte(lower[at - 1])) &&
          (end == lower.size() || !word_byte(lower[end]))) {
        out.emplace_back(name);
        break;
      }
    }
  }
  return out;
}

DuckDbSession::DuckDbSession(const duckdb_c::Api& api) : api_(api) {}

DuckDbSession::~DuckDbSession() {  // the connection first: its views scan the registry
  if (con_ != nullptr) api_.disconnect(&con_);
  if (db_ != nullptr) api_.close(&db_);
}

bool DuckDbSession::open(std::string& why_not) {
  if (api_.open(nullptr, &db_) != duckdb_c::kSuccess) {
    why_not = "DuckDB could not open an in-memory database";
    return false;
  }
  if (api_.connect(db_, &con_) != duckdb_c::kSuccess) {
    why_not = "DuckDB could not connect to its database";
    return false;
  }
  tables_ = std::make_unique<DuckDbTables>(api_);
  return tables_->register_function(con_, why_not);
}

bool DuckDbSession::add_table(std::shared_ptr<const RecordTable> table, std::string& why_not) {
  const std::string name = table->name;
  const std::string view = tables_->add(std::move(table));
  duckdb_c::result r{};
  const bool ok = api_.query(con_, view.c_str(), &r) == duckdb_c::kSuccess;
  if (!ok) {
    const char* message = api_.result_error(&r);
    why_not = "DuckDB did not take the table " + name + ": " + (message ? message : "");
  }
  api_.destroy_result(&r);
  return ok;
}

DuckDbSession::Outcome DuckDbSession::run(const std::string& query) {
  Outcome out;
  // One statement only: DuckDB's Python module runs several one after the other and answers
  // with the last, and words a query that does not parse its own way.
  duckdb_c::extracted_statements statements = nullptr;
  const duckdb_c::idx_t count = api_.extract_statements(con_, query.c_str(), &statements);
  api_.destroy_extracted(&statements);
  if (count != 1) {
    out.kind = Outcome::kUnsupported;
    out.message =
        count == 0 ? "the query has no statement that parses" : "the query has several statements";
    return out;
  }
  duckdb_c::result r{};
  if (api_.query(con_, query.c_str(), &r) != duckdb_c::kSuccess) {
    out.kind = Outcome::kError;
    const char* message = api_.result_error(&r);
    out.message = python_message(message ? message : "the query failed");
  } else {
    out = read_result(api_, r);
  }
  api_.destroy_result(&r);
  return out;
}

}  // namespace jaxprof
