// The rows a caller asks for (Profile.table's device=, steps= and include_warmup=), kept in place
// in a built table: filtering a copy of the whole table held both at once (tpu80's device_ops:
// 74 MB twice).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "jaxprof/analysis/tables/table.h"

namespace jaxprof {

struct TableFilter {
  std::string device;                         // as --device: substring, or "re:REGEX"; "" = all
  std::optional<std::vector<int64_t>> steps;  // rows of these step numbers (a null step is none)
  bool include_warmup = true;  // false: drop rows set apart (warmup, autotuning, role != steady)
  // Whether the filter keeps every row of every table.
  bool keeps_all() const { return device.empty() && !steps && include_warmup; }
};

// Drops the rows `filter` does not keep. Each condition applies to the tables that have its
// column: `device` (string), `step` (int64), `warmup` and `autotuning` (bool; null counts as
// false), `role` (string: "steady" is kept). Dictionaries stay whole, as Arrow's filter leaves
// them. Throws InputError for an invalid device regex.
void filter_table_rows(RecordTable& table, const TableFilter& filter);

}  // namespace jaxprof
