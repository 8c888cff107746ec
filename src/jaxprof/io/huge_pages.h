// Transparent huge pages for large fresh buffers (decompressed members, decoded tables): filling
// megabytes 4 KiB page fault by page fault costs as much as a fifth of decoding them. Only a hint:
// where the kernel does not give huge pages on request nothing changes.
#pragma once

#include <cstddef>

namespace jaxprof {

// Asks for huge pages on the 2 MiB-aligned interior of [data, data + size). Call before the
// memory is first touched; smaller ranges are left alone.
void advise_huge_pages(void* data, size_t size);

}  // namespace jaxprof
