#include "jaxprof/analysis/tables/table.h"

#include <stdexcept>

namespace jaxprof {

const char* table_type_name(TableType t) {
  switch (t) {
    case TableType::kInt64:
      return "int64";
    case TableType::kUInt64:
      return "uint64";
    case TableType::kDouble:
      return "double";
    case TableType::kBool:
      return "bool";
    case TableType::kString:
      return "string";
  }
  return "?";
}

size_t RecordColumn::size() const {
  switch (type) {
    case TableType::kInt64:
      return i64.size();
    case TableType::kUInt64:
      return u64.size();
    case TableType::kDouble:
      return f64.size();
    case TableType::kBool:
      return b.size();
    case TableType::kString:
      return codes.size();
  }
  return 0;
}

void RecordColumn::reserve(size_t n) {
  switch (type) {
    case TableType::kInt64:
      i64.reserve(n);
      break;
    case TableType::kUInt64:
      u64.reserve(n);
      break;
    case TableType::kDouble:
      f64.reserve(n);
      break;
    case TableType::kBool:
      b.reserve(n);
      break;
    case TableType::kString:
      codes.reserve(n);
      break;
  }
}

void RecordColumn::push_null() {
  switch (type) {
    case TableType::kInt64:
      i64.push_back(0);
      break;
    case TableType::kUInt64:
      u64.push_back(0);
      break;
    case TableType::kDouble:
      f64.push_back(0);
      break;
    case TableType::kBool:
      b.push_back(0);
      break;
    case TableType::kString:
      codes.push_back(0);
      break;
  }
  clear_last_valid();
}

void RecordColumn::push_nulls(size_t count) {
  if (count == 0) return;
  const size_t begin = size(), end = begin + count;
  switch (type) {
    case TableType::kInt64:
      i64.resize(end, 0);
      break;
    case TableType::kUInt64:
      u64.resize(end, 0);
      break;
    case TableType::kDouble:
      f64.resize(end, 0);
      break;
    case TableType::kBool:
      b.resize(end, 0);
      break;
    case TableType::kString:
      codes.resize(end, 0);
      break;
  }
  // Bits of rows not pushed yet stay set, as clear_last_valid leaves them.
  validity.resize((end + 7) / 8, 0xff);
  size_t row = begin;
  for (; row < end && (row & 7) != 0; ++row)
    validity[row >> 3] = static_cast<uint8_t>(validity[row >> 3] & ~(1u << (row & 7)));
  for (; row + 8 <= end; row += 8) validity[row >> 3] = 0;
  for (; row < end; ++row)
    validity[row >> 3] = static_cast<uint8_t>(validity[row >> 3] & ~(1u << (row & 7)));
  null_count += count;
}

void RecordColumn::clear_last_valid() {
  const size_t n = size(), row = n - 1;
  // The bitmap covers every row so far; rows before the first null are all present.
  if (validity.empty()) validity.assign((n + 7) / 8, 0xff);
  while (validity.size() < (n + 7) / 8) validity.push_back(0xff);
  validity[row >> 3] = static_cast<uint8_t>(validity[row >> 3] & ~(1u << (row & 7)));
  ++null_count;
}

int32_t StringCodes::code(std::string_view s) {
  auto [it, added] =
      index_.try_emplace(std::string(s), static_cast<int32_t>(column_.dictionary.size()));
  if (added) column_.dictionary.emplace_back(s);
  return it->second;
}

void StringCodes::push(std::string_view s, bool present) {
  if (!present) {
    column_.push_null();
    return;
  }
  column_.push_code(code(s));
  if (!column_.validity.empty()) {
    // Present rows after a null: the bitmap grows with the column.
    const size_t n = column_.codes.size();
    while (column_.validity.size() < (n + 7) / 8) column_.validity.push_back(0xff);
  }
}

RecordColumn& RecordTable::add(std::string name, TableType type, std::string unit,
                               std::string meaning) {
  RecordColumn& c = columns.emplace_back();
  c.name = std::move(name);
  c.type = type;
  c.unit = std::move(unit);
  c.meaning = std::move(meaning);
  return c;
}

RecordColumn& RecordTable::column(std::string_view name) {
  for (RecordColumn& c : columns)
    if (c.name == name) return c;
  throw std::logic_error("no column " + std::string(name) + " in table " + this->name);
}

void RecordTable::finish() {
  for (RecordColumn& c : columns) {
    if (c.size() != rows)
      throw std::logic_error("table " + name + ": column " + c.name + " has " +
                             std::to_string(c.size()) + " values for " + std::to_string(rows) +
                             " rows");
    // A bitmap that stopped growing at the last null covers every row.
    if (!c.validity.empty()) c.validity.resize((rows + 7) / 8, 0xff);
  }
}

}  // namespace jaxprof
