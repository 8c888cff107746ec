// XSpace (`*.xplane.pb`): planes, metadata and line counting, every line scanned and decoded (the
// two must agree), every stat read, and the HloProtos of /host:metadata indexed.
#include "fuzz_common.h"

using namespace jaxprof;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  fuzz::import_and_read([&](Profile& p) {
    import_xspace(p, fuzz::buffer_of(data, size, "fuzz.xplane.pb"), "fuzz", fuzz::one_thread());
    index_hlo_from_metadata(p);
  });
  return 0;
}
