// xz streams (nsys-jax's HLO dumps and host range tables), with and without the stream's own
// check, the output capped.
#include "fuzz_common.h"
#include "jaxprof/io/xz.h"

using namespace jaxprof;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  for (bool verify : {true, false}) {
    try {
      std::vector<uint8_t> out = unxz(in, "fuzz.xz", size_t{1} << 24, verify);
      fuzz::check(out.size() <= size_t{1} << 24, "unxz wrote past its cap");
    } catch (const InputError& e) {
      fuzz::named(e);
    }
  }
  return 0;
}
