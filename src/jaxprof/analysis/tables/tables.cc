#include "jaxprof/analysis/tables/tables.h"

#include "jaxprof/analysis/tables/collectives_table.h"
#include "jaxprof/analysis/tables/compiles_table.h"
#include "jaxprof/analysis/tables/device_ops_table.h"
#include "jaxprof/analysis/tables/execution_tables.h"
#include "jaxprof/analysis/tables/host_ranges_table.h"
#include "jaxprof/analysis/tables/kernels_table.h"
#include "jaxprof/analysis/tables/memory_table.h"
#include "jaxprof/common/error.h"

namespace jaxprof {

const std::vector<TableInfo>& table_list() {
  static const std::vector<TableInfo> tables = {
      {"device_ops", "one device op event"},
      {"module_executions", "one run of a compiled program on one device"},
      {"steps", "one step"},
      {"host_ranges", "one event of a host thread"},
      {"collectives", "one collective instance on one device"},
      {"compiles", "one compile"},
      {"compile_passes", "one event name along one compile's wall time"},
      {"kernels", "one GPU kernel launch"},
      {"memory", "one allocator event"},
  };
  return tables;
}

RecordTable build_table(const Profile& p, std::string_view name) {
  if (name == "device_ops") return device_ops_table(p);
  if (name == "module_executions") return module_executions_table(p);
  if (name == "steps") return steps_table(p);
  if (name == "host_ranges") return host_ranges_table(p);
  if (name == "collectives") return collectives_table(p);
  if (name == "compiles") return compiles_table(p);
  if (name == "compile_passes") return compile_passes_table(p);
  if (name == "kernels") return kernels_table(p);
  if (name == "memory") return memory_table(p);
  std::string known;
  for (const TableInfo& t : table_list())
    known += (known.empty() ? "" : ", ") + std::string(t.name);
  throw InputError("", "no table '" + std::string(name) + "' (tables: " + known + ")");
}

}  // namespace jaxprof
