#include "jaxprof/formats/line_order.h"

#include <algorithm>
#include <numeric>
#include <type_traits>
#include <vector>

namespace jaxprof {

void sort_line_events(Events& ev, uint32_t b, uint32_t n, LineColumns columns) {
  bool sorted = true;
  for (uint32_t i = b + 1; i < b + n && sorted; ++i)
    sorted = ev.start_ps[i - 1] < ev.start_ps[i] ||
             (ev.start_ps[i - 1] == ev.start_ps[i] && ev.duration_ps[i - 1] >= ev.duration_ps[i]);
  if (sorted) return;
  std::vector<uint32_t> order(n);
  std::iota(order.begin(), order.end(), b);
  std::stable_sort(order.begin(), order.end(), [&](uint32_t x, uint32_t y) {
    if (ev.start_ps[x] != ev.start_ps[y]) return ev.start_ps[x] < ev.start_ps[y];
    return ev.duration_ps[x] > ev.duration_ps[y];
  });
  auto permute = [&](auto& column) {
    using T = typename std::decay_t<decltype(column)>::value_type;  // Column<T>
    std::vector<T> tmp(n);
    for (uint32_t i = 0; i < n; ++i) tmp[i] = column[order[i]];
    std::copy(tmp.begin(), tmp.end(), column.begin() + b);
  };
  permute(ev.start_ps);
  permute(ev.duration_ps);
  permute(ev.metadata);
  permute(ev.raw);
  if (ev.wide) permute(ev.raw_high);
  permute(ev.hlo_op);
  permute(ev.module);
  if (columns.kernel_ids) {
    permute(ev.correlation_id);
    permute(ev.group_id);
  }
  if (columns.device_clock) {
    permute(ev.device_start_ps);
    permute(ev.device_duration_ps);
  }
  if (columns.memory_ops) permute(ev.memory_op);
}

}  // namespace jaxprof
