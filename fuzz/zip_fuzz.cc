// zip archives (nsys-jax's container): the central directory, then every member read (inflated
// and its CRC checked), with member sizes capped as a caller would cap them.
#include "fuzz_common.h"
#include "jaxprof/io/zip.h"

using namespace jaxprof;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    ZipLimits limits;
    limits.max_member_bytes = size_t{1} << 24;
    ZipArchive zip(fuzz::buffer_of(data, size ? size : 1, "fuzz.zip"), limits);
    for (const ZipEntry& e : zip.entries()) {
      std::vector<uint8_t> storage;
      try {
        std::string_view bytes = zip.read(e, storage);
        fuzz::check(bytes.size() == e.size, "a member read differs from its declared size");
      } catch (const InputError& e) {
        fuzz::named(e);
      }
      (void)zip.find(e.name);
    }
  } catch (const InputError& e) {
    fuzz::named(e);
  }
  return 0;
}
