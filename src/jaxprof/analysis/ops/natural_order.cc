#include "jaxprof/analysis/ops/natural_order.h"

namespace jaxprof {

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

}  // namespace

bool natural_less(std::string_view a, std::string_view b) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (is_digit(a[i]) && is_digit(b[j])) {
      // Compare the digit runs as numbers of any length: skip leading zeros, then the longer
      // run is larger, else the first differing digit decides.
      size_t i0 = i, j0 = j;
      while (i < a.size() && a[i] == '0') ++i;
      while (j < b.size() && b[j] == '0') ++j;
      size_t si = i, sj = j;
      while (i < a.size() && is_digit(a[i])) ++i;
      while (j < b.size() && is_digit(b[j])) ++j;
      size_t li = i - si, lj = j - sj;
      if (li != lj) return li < lj;
      int c = a.substr(si, li).compare(b.substr(sj, lj));
      if (c != 0) return c < 0;
      // Equal numbers: fewer leading zeros first, so that the order stays strict.
      if (si - i0 != sj - j0) return si - i0 < sj - j0;
      continue;
    }
    if (a[i] != b[j]) return static_cast<unsigned char>(a[i]) < static_cast<unsigned char>(b[j]);
    ++i;
    ++j;
  }
  return a.size() - i < b.size() - j;
}

}  // namespace jaxprof
