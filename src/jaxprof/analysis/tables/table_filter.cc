#include "jaxprof/analysis/tables/table_filter.h"

#include <algorithm>

#include "jaxprof/analysis/ops/event_filter.h"

namespace jaxprof {
namespace {

RecordColumn* find(RecordTable& t, std::string_view name, TableType type) {
  for (RecordColumn& c : t.columns)
    if (c.name == name && c.type == type) return &c;
  return nullptr;
}

// Per dictionary entry of a string column, whether rows with that code pass `test`.
template <typename Test>
std::vector<uint8_t> codes_passing(const RecordColumn& c, Test test) {
  std::vector<uint8_t> pass(c.dictionary.size());
  for (size_t i = 0; i < pass.size(); ++i) pass[i] = test(c.dictionary[i]) ? 1 : 0;
  return pass;
}

// Clears keep[r] for each row of string column `c` whose value fails (a null fails).
void keep_codes(const RecordColumn& c, const std::vector<uint8_t>& pass,
                std::vector<uint8_t>& keep) {
  for (size_t r = 0; r < keep.size(); ++r)
    if (c.is_null(r) || !pass[static_cast<size_t>(c.codes[r])]) keep[r] = 0;
}

template <typename T>
void compact(std::vector<T>& v, const std::vector<uint8_t>& keep, size_t kept) {
  if (v.empty()) return;
  size_t out = 0;
  for (size_t r = 0; r < keep.size(); ++r)
    if (keep[r]) v[out++] = v[r];
  v.resize(kept);
  // Hand the rest back when much was dropped (a device of many); a copy of one column at most.
  if (kept < v.capacity() / 2) v.shrink_to_fit();
}

void compact_validity(RecordColumn& c, const std::vector<uint8_t>& keep, size_t kept) {
  if (c.validity.empty()) return;
  std::vector<uint8_t> bits((kept + 7) / 8, 0);
  uint64_t nulls = 0;
  size_t out = 0;
  for (size_t r = 0; r < keep.size(); ++r) {
    if (!keep[r]) continue;
    if (c.is_null(r))
      ++nulls;
    else
      bits[out >> 3] |= static_cast<uint8_t>(1u << (out & 7));
    ++out;
  }
  c.null_count = nulls;
  if (nulls == 0)
    c.validity.clear();
  else
    c.validity = std::move(bits);
}

}  // namespace

void filter_table_rows(RecordTable& t, const TableFilter& f) {
  if (f.keeps_all() || t.rows == 0) return;
  std::vector<uint8_t> keep(t.rows, 1);
  if (!f.device.empty()) {
    if (RecordColumn* c = find(t, "device", TableType::kString)) {
      EventFilterSpec spec;
      spec.device = f.device;
      spec.names.device = "device=";
      const EventFilter by_device(spec);  // throws for an invalid regex
      keep_codes(*c,
                 codes_passing(*c, [&](const std::string& s) { return by_device.keeps_device(s); }),
                 keep);
    }
  }
  if (f.steps) {
    if (RecordColumn* c = find(t, "step", TableType::kInt64)) {
      std::vector<int64_t> wanted = *f.steps;
      std::sort(wanted.begin(), wanted.end());
      for (size_t r = 0; r < keep.size(); ++r)
        if (c->is_null(r) || !std::binary_search(wanted.begin(), wanted.end(), c->i64[r]))
          keep[r] = 0;
    }
  }
  if (!f.include_warmup) {
    for (const char* flag : {"warmup", "autotuning"})
      if (RecordColumn* c = find(t, flag, TableType::kBool))
        for (size_t r = 0; r < keep.size(); ++r)
          if (!c->is_null(r) && c->b[r]) keep[r] = 0;
    if (RecordColumn* c = find(t, "role", TableType::kString))
      keep_codes(*c, codes_passing(*c, [](const std::string& s) { return s == "steady"; }), keep);
  }
  const size_t kept = static_cast<size_t>(std::count(keep.begin(), keep.end(), 1));
  if (kept == t.rows) return;
  for (RecordColumn& c : t.columns) {
    compact_validity(c, keep, kept);
    compact(c.i64, keep, kept);
    compact(c.u64, keep, kept);
    compact(c.f64, keep, kept);
    compact(c.b, keep, kept);
    compact(c.codes, keep, kept);
  }
  t.rows = kept;
  t.finish();
}

}  // namespace jaxprof
