#include "jaxprof/model/column.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>

namespace jaxprof {

namespace {
constexpr size_t kHugePage = size_t{2} << 20;
// Below this, malloc is cheaper than a mapping of its own.
constexpr size_t kMapThreshold = size_t{1} << 20;
}  // namespace

void* column_allocate(size_t bytes) {
  if (bytes == 0) bytes = 1;
  if (bytes < kMapThreshold) {
    void* p = std::malloc(bytes);
    if (!p) throw std::bad_alloc();
    return p;
  }
  size_t rounded = (bytes + kHugePage - 1) / kHugePage * kHugePage;
  void* p = ::mmap(nullptr, rounded, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  ::madvise(p, rounded, MADV_HUGEPAGE);
  return p;
}

void column_free(void* p, size_t bytes) {
  if (bytes == 0) bytes = 1;
  if (bytes < kMapThreshold) {
    std::free(p);
    return;
  }
  ::munmap(p, (bytes + kHugePage - 1) / kHugePage * kHugePage);
}

void column_discard(void* p, size_t bytes, size_t capacity) {
  if (capacity < kMapThreshold) return;
  static const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  auto begin = reinterpret_cast<uintptr_t>(p);
  uintptr_t first = (begin + page - 1) / page * page, last = (begin + bytes) / page * page;
  if (last > first) ::madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED);
}

}  // namespace jaxprof
