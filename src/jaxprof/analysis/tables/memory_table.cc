#include "jaxprof/analysis/tables/memory_table.h"

#include <optional>

#include "jaxprof/analysis/memory/memory_timeline.h"

namespace jaxprof {
namespace {

void push(RecordColumn& col, const std::optional<int64_t>& v) {
  if (v)
    col.push(*v);
  else
    col.push_null();
}

}  // namespace

RecordTable memory_table(const Profile& p) {
  RecordTable t;
  t.name = "memory";
  RecordColumn& host = t.add("host", TableType::kString, "", "the host");
  RecordColumn& allocator =
      t.add("allocator", TableType::kString, "", "the allocator, as `memory` names it");
  RecordColumn& device = t.add("device", TableType::kString, "",
                               "the device it serves (GPU:0, TPU:2, host); null if unknown");
  RecordColumn& space =
      t.add("memory_space", TableType::kString, "", "device or host memory; null if unknown");
  RecordColumn& kind = t.add("event", TableType::kString, "", "allocation or deallocation");
  RecordColumn& time = t.add("time_ps", TableType::kInt64, "ps", "when, on the timeline");
  RecordColumn& in_use = t.add("bytes_in_use", TableType::kInt64, "bytes",
                               "in use after it (bytes_allocated); null if not recorded");
  RecordColumn& reserved = t.add("bytes_reserved", TableType::kInt64, "bytes",
                                 "reserved after it (bytes_reserved); null if not recorded");
  RecordColumn& available = t.add("bytes_available", TableType::kInt64, "bytes",
                                  "available after it; null if not recorded");
  RecordColumn& peak = t.add("peak_bytes_in_use", TableType::kInt64, "bytes",
                             "the allocator's own running peak; null if not recorded");
  RecordColumn& fragmentation = t.add("fragmentation", TableType::kDouble, "",
                                      "the allocator's fragmentation; null if not recorded");
  RecordColumn& bytes = t.add("bytes", TableType::kInt64, "bytes",
                              "allocated or freed (allocation_bytes); null if not recorded");
  RecordColumn& requested =
      t.add("requested_bytes", TableType::kInt64, "bytes", "requested; null if not recorded");
  RecordColumn& address =
      t.add("address", TableType::kInt64, "", "the buffer's address; null if not recorded");
  RecordColumn& op = t.add("op", TableType::kString, "", "the op that allocated it (tf_op)");
  RecordColumn& shape = t.add("shape", TableType::kString, "", "its shape, as written");
  RecordColumn& dtype = t.add("data_type", TableType::kString, "", "its data type");
  RecordColumn& region = t.add("region", TableType::kString, "", "its region_type");
  StringCodes hosts(host), allocators(allocator), devices(device), spaces(space), kinds(kind),
      ops(op), shapes(shape), dtypes(dtype), regions(region);
  for_each_allocator_event(p, [&](const AllocatorEventRecord& r) {
    hosts.push(r.allocator->host);
    allocators.push(r.allocator->allocator);
    devices.push(r.allocator->device, !r.allocator->device.empty());
    spaces.push(r.allocator->memory_space, !r.allocator->memory_space.empty());
    kinds.push(r.allocation ? "allocation" : "deallocation");
    time.push(r.time_ps);
    push(in_use, r.in_use);
    push(reserved, r.reserved);
    push(available, r.available);
    push(peak, r.peak_in_use);
    if (r.fragmentation)
      fragmentation.push_f(*r.fragmentation);
    else
      fragmentation.push_null();
    push(bytes, r.bytes);
    push(requested, r.requested_bytes);
    push(address, r.address);
    ops.push(r.op, !r.op.empty());
    shapes.push(r.shape, !r.shape.empty());
    dtypes.push(r.dtype, !r.dtype.empty());
    regions.push(r.region, !r.region.empty());
    ++t.rows;
  });
  t.finish();
  return t;
}

}  // namespace jaxprof
