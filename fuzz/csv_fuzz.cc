// CSV tables (nsys-jax's host NVTX ranges, `report_nvtx_pushpop_trace.csv.xz` decompressed).
#include "fuzz_common.h"
#include "jaxprof/formats/nsys_jax/nsys_host_ranges.h"
#include "jaxprof/io/csv.h"

using namespace jaxprof;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    CsvTable t(text, "fuzz.csv");
    for (size_t r = 0; r < t.rows(); ++r)
      for (size_t c = 0; c < t.header().size(); ++c) (void)t.at(r, c);
  } catch (const InputError& e) {
    fuzz::named(e);
  }
  try {
    (void)parse_pushpop_csv(text, "fuzz.csv");
  } catch (const InputError& e) {
    fuzz::named(e);
  }
  return 0;
}
