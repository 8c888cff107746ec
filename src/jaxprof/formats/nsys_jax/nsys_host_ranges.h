// The host-side NVTX push/pop ranges of one nsys-jax process (`report_nvtx_pushpop_trace.csv.xz`,
// or the Parquet table newer nsys-jax versions write instead): XLA's compile phases on the main
// thread and its compiler worker threads, plus host-side module and thunk launches.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "jaxprof/io/parquet.h"

namespace jaxprof {

struct HostRange {
  int64_t start_ns = 0, end_ns = 0;
  int64_t pid = 0, tid = 0;
  std::string_view name;  // as recorded, e.g. "TSL:XlaPass:#name=dce,module=jit_f,program_id=3#"
};

// Parses the CSV that `nsys stats --report nvtx_pushpop_trace` writes ("Start (ns)", "End (ns)",
// "Name", "PID", "TID", ...). Names are views into `text`. Throws InputError naming `name`.
std::vector<HostRange> parse_pushpop_csv(std::string_view text, const std::string& name);

// Parses the Parquet form of the same table ("Start"/"Start (ns)", "End"/"End (ns)",
// "Text"/"Name", "PID", "TID"). Names are views into `bytes` or into `keep`.
std::vector<HostRange> parse_pushpop_parquet(std::string_view bytes, const std::string& name,
                                             std::vector<ParquetColumn>& keep);

}  // namespace jaxprof
