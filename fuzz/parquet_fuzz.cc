// Parquet (and the Thrift compact metadata in it): the footer, then every column read, as
// nsys-jax's tables are; then the same bytes as each table the nsys-jax reader parses.
#include "fuzz_common.h"
#include "jaxprof/formats/nsys_jax/nsys_device_metadata.h"
#include "jaxprof/formats/nsys_jax/nsys_host_ranges.h"
#include "jaxprof/io/parquet.h"

using namespace jaxprof;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  try {
    ParquetLimits limits;
    limits.max_values = uint64_t{1} << 20;
    limits.max_page_bytes = uint64_t{1} << 24;
    ParquetFile f(bytes, "fuzz.parquet", limits);
    for (size_t c = 0; c < f.columns().size(); ++c) {
      try {
        ParquetColumn col = f.read(static_cast<int>(c));
        if (f.columns()[c].max_repetition > 0) (void)col.rows();
        (void)f.find(f.columns()[c].path);
      } catch (const InputError& e) {
        fuzz::named(e);
      }
    }
  } catch (const InputError& e) {
    fuzz::named(e);
  }
  try {
    std::vector<ParquetColumn> keep;
    (void)parse_pushpop_parquet(bytes, "fuzz.parquet", keep);
  } catch (const InputError& e) {
    fuzz::named(e);
  }
  try {
    (void)parse_device_metadata(bytes, "fuzz.parquet");
  } catch (const InputError& e) {
    fuzz::named(e);
  }
  return 0;
}
