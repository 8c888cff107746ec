// nsys-jax archives (`*.zip`): the whole import (zip, Parquet tables, CSV or Parquet host ranges,
// xz HLO dumps, HloProtos), then every line decoded and every stat read.
//
// The custom mutator rewrites member CRCs after each mutation (zip_crc.h), so mutations inside a
// member reach the parsers, and an input saved as a finding is an archive any reader accepts up to
// the member's contents (the command line replays it as it is). JAXPROF_FUZZ_KEEP_CRC=1 turns the
// rewriting off, to fuzz the CRC check itself.
#include <cstdlib>

#include "fuzz_common.h"
#include "jaxprof/formats/nsys_jax/nsys_jax.h"
#include "zip_crc.h"

using namespace jaxprof;

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size,
                                          unsigned int) {
  size = LLVMFuzzerMutate(data, size, max_size);
  static const bool keep = std::getenv("JAXPROF_FUZZ_KEEP_CRC") != nullptr;
  if (!keep) fuzz::fix_zip_crcs(data, size);
  return size;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  fuzz::import_and_read([&](Profile& p) {
    import_nsys_jax(p, fuzz::buffer_of(data, size, "fuzz.zip"), "", fuzz::one_thread());
  });
  return 0;
}
