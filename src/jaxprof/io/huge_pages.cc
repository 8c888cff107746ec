#include "jaxprof/io/huge_pages.h"

#include <sys/mman.h>

#include <cstdint>

namespace jaxprof {

void advise_huge_pages(void* data, size_t size) {
  constexpr uintptr_t kHuge = uintptr_t{2} << 20;
  auto at = reinterpret_cast<uintptr_t>(data);
  uintptr_t begin = (at + kHuge - 1) & ~(kHuge - 1);
  uintptr_t end = (at + size) & ~(kHuge - 1);
  if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
}

}  // namespace jaxprof
