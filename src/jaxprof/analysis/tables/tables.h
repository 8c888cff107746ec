// Every record of the profile as a table (table.h), one table per kind of record, for questions
// no command answers: device_ops, module_executions, steps, host_ranges, collectives, compiles,
// compile_passes, kernels, memory.
// Each table is built on its own, from the analyses the commands use, so its figures add up to
// theirs (docs/tables.md has the schemas and the sums that tie them to the commands).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "jaxprof/analysis/tables/table.h"
#include "jaxprof/model/profile.h"

namespace jaxprof {

struct TableInfo {
  const char* name;
  const char* meaning;  // what one row is
};
// The tables, in the order `jaxprof tables` lists them.
const std::vector<TableInfo>& table_list();

// Throws InputError for a name table_list() does not hold.
RecordTable build_table(const Profile& profile, std::string_view name);

}  // namespace jaxprof
