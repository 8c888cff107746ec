// The order analyses expect of a line's events: by start, the longest first among events that
// start together, file order among equals. Importers fill a line's columns in file order, then put
// the line in this order.
#pragma once

#include <cstdint>

#include "jaxprof/model/profile.h"

namespace jaxprof {

// The event columns a line fills beyond the ones every line has (start, duration, metadata, raw,
// hlo_op, module): those must move with its events. As Line::kernel_ids, device_clock and
// memory_ops.
struct LineColumns {
  bool kernel_ids = false;    // correlation_id, group_id
  bool device_clock = false;  // device_start_ps, device_duration_ps
  bool memory_ops = false;    // memory_op
};

// Puts events [first, first + count) of `events` in line order (a stable sort), moving every
// column the line fills; a line already in order is left as it is.
void sort_line_events(Events& events, uint32_t first, uint32_t count, LineColumns columns);

}  // namespace jaxprof
