// Tables cross to Python as ArrowTable objects: the C++ columns behind the Arrow PyCapsule
// interface (__arrow_c_stream__, analysis/tables/table_arrow.h), which pyarrow and DuckDB read
// without a copy and DuckDB scans without pyarrow, so no Python object is made per row or string.
#include "_core_tables.h"

#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "jaxprof/analysis/tables/table_arrow.h"
#include "jaxprof/analysis/tables/table_filter.h"
#include "jaxprof/analysis/tables/tables.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace jaxprof {
namespace {

// A table held in C++ that exports itself as an Arrow C stream: each __arrow_c_stream__ call
// makes a new stream over the same buffers, so a consumer may scan it as often as it likes.
struct ArrowTable {
  std::shared_ptr<const ArrowExport> data;
};

// The PyCapsule interface's capsules own their struct: released (if the consumer did not take
// it) and freed with the capsule.
template <typename T>
nb::capsule arrow_capsule(T* c, const char* name) {
  return nb::capsule(c, name, [](void* p) noexcept {
    T* s = static_cast<T*>(p);
    if (s->release != nullptr) s->release(s);
    delete s;
  });
}

void bind_arrow_table(nb::module_& m, ProfileAccessor access) {
  nb::class_<ArrowTable>(m, "ArrowTable",
                         "A table of the profile for Arrow consumers (the Arrow PyCapsule "
                         "interface), built in C++; no pyarrow needed.")
      .def_prop_ro("name", [](const ArrowTable& t) { return t.data->table().name; })
      .def_prop_ro("num_rows", [](const ArrowTable& t) { return t.data->table().rows; })
      .def("__arrow_c_schema__",
           [](const ArrowTable& t) {
             auto* schema = new ArrowSchema{};
             t.data->export_schema(schema);
             return arrow_capsule(schema, "arrow_schema");
           })
      .def(
          "__arrow_c_stream__",
          [](const ArrowTable& t, nb::object requested_schema) {
            // The schema is the table's: a requested one is a hint the interface lets us ignore.
            (void)requested_schema;
            auto* stream = new ArrowArrayStream{};
            ArrowExport::export_stream(t.data, stream);
            return arrow_capsule(stream, "arrow_array_stream");
          },
          "requested_schema"_a = nb::none());
  m.def(
      "arrow_table",
      [access](nb::handle profile, const std::string& name, const std::string& device,
               std::optional<std::vector<int64_t>> steps, bool include_warmup) {
        ProfileAccess a = access(profile);
        nb::gil_scoped_release release;
        std::lock_guard lock(*a.mu);
        RecordTable t = build_table(*a.profile, name);
        filter_table_rows(t, TableFilter{device, std::move(steps), include_warmup});
        return ArrowTable{std::make_shared<const ArrowExport>(std::move(t))};
      },
      "profile"_a, "name"_a, "device"_a = "", "steps"_a = nb::none(), "include_warmup"_a = true,
      "A table of the profile as an ArrowTable (Arrow C stream); the filters as Profile.table's, "
      "applied in place (by default every row).");
}

}  // namespace

void bind_tables(nb::module_& m, ProfileAccessor access) {
  m.def("table_list", [] {
    std::vector<std::pair<std::string, std::string>> out;
    for (const TableInfo& t : table_list()) out.emplace_back(t.name, t.meaning);
    return out;
  });
  bind_arrow_table(m, access);
}

}  // namespace jaxprof
