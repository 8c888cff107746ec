// Tables cross to Python as NumPy arrays over the C++ columns' own memory (each array owns its
// vector), packed validity bitmaps, and dictionaries as one UTF-8 buffer with int32 offsets:
// pyarrow wraps all of them as Arrow buffers, so no Python object is made per row or per string.
#include "_core_tables.h"

#include <nanobind/ndarray.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <string>
#include <utility>
#include <vector>

#include "jaxprof/analysis/tables/tables.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace jaxprof {
namespace {

template <typename T>
nb::object owned_array(std::vector<T>&& values) {
  auto* heap = new std::vector<T>(std::move(values));
  nb::capsule owner(heap, [](void* p) noexcept { delete static_cast<std::vector<T>*>(p); });
  return nb::cast(nb::ndarray<nb::numpy, T, nb::ndim<1>>(heap->data(), {heap->size()}, owner));
}

// The dictionary as Arrow's string layout: int32 offsets and the bytes one after another.
std::pair<nb::object, nb::object> dictionary_buffers(const std::vector<std::string>& dict) {
  std::vector<int32_t> offsets;
  offsets.reserve(dict.size() + 1);
  std::vector<uint8_t> bytes;
  offsets.push_back(0);
  for (const std::string& s : dict) {
    bytes.insert(bytes.end(), s.begin(), s.end());
    offsets.push_back(static_cast<int32_t>(bytes.size()));
  }
  return {owned_array(std::move(offsets)), owned_array(std::move(bytes))};
}

nb::dict column_dict(RecordColumn&& c) {
  nb::dict d;
  d["name"] = c.name;
  d["type"] = table_type_name(c.type);
  d["unit"] = c.unit;
  d["meaning"] = c.meaning;
  d["null_count"] = c.null_count;
  d["validity"] = c.validity.empty() ? nb::none() : owned_array(std::move(c.validity));
  switch (c.type) {
    case TableType::kInt64:
      d["values"] = owned_array(std::move(c.i64));
      break;
    case TableType::kUInt64:
      d["values"] = owned_array(std::move(c.u64));
      break;
    case TableType::kDouble:
      d["values"] = owned_array(std::move(c.f64));
      break;
    case TableType::kBool:
      d["values"] = owned_array(std::move(c.b));
      break;
    case TableType::kString: {
      d["values"] = owned_array(std::move(c.codes));
      auto [offsets, bytes] = dictionary_buffers(c.dictionary);
      d["dictionary_offsets"] = offsets;
      d["dictionary_bytes"] = bytes;
      break;
    }
  }
  return d;
}

}  // namespace

void bind_tables(nb::module_& m, ProfileAccessor access) {
  m.def("table_list", [] {
    std::vector<std::pair<std::string, std::string>> out;
    for (const TableInfo& t : table_list()) out.emplace_back(t.name, t.meaning);
    return out;
  });
  m.def(
      "table",
      [access](nb::handle profile, const std::string& name) {
        ProfileAccess a = access(profile);
        RecordTable t;
        {
          nb::gil_scoped_release release;
          std::lock_guard lock(*a.mu);
          t = build_table(*a.profile, name);
        }
        nb::list columns;
        for (RecordColumn& c : t.columns) columns.append(column_dict(std::move(c)));
        return nb::make_tuple(t.name, t.rows, columns);
      },
      "profile"_a, "name"_a,
      "A table of the profile: (name, rows, [column dicts of NumPy buffers]).");
}

}  // namespace jaxprof
