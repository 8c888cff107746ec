// XSpace (`*.xplane.pb`): planes, metadata and line counting, every line scanned and decoded (the
// two must agree), every stat read, and the HloProtos of /host:metadata indexed.
#include "fuzz_common.h"

using namespace jaxprof;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  Profile p;
  ImportOptions options;
  options.threads = 1;
  options.release_pages = false;
  try {
    import_xspace(p, fuzz::buffer_of(data, size, "fuzz.xplane.pb"), "fuzz", options);
    index_hlo_from_metadata(p);
    finish_import(p);
  } catch (const InputError& e) {
    fuzz::named(e);
    return 0;
  }
  fuzz::read_everything(p);
  return 0;
}
