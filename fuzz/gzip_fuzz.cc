// gzip (and zlib) streams, as `*.xplane.pb.gz` and `*.trace.json.gz` are read, with the output
// capped as the reader caps it.
#include "fuzz_common.h"

using namespace jaxprof;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  try {
    std::vector<uint8_t> out = gunzip(in, "fuzz.gz", size_t{1} << 24, /*whole_file=*/true);
    fuzz::check(out.size() <= size_t{1} << 24, "gunzip wrote past its cap");
  } catch (const InputError& e) {
    fuzz::named(e);
  }
  return 0;
}
