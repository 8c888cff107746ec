// Field numbers are those of XLA's public xla/service/hlo.proto.
#include "jaxprof/model/buffer_assignment.h"

#include "jaxprof/wire/reader.h"

namespace jaxprof {
namespace {

using wire::Field;
using wire::Reader;
using wire::WireType;

std::string_view len_field(const Reader& r, const Field& f, const char* what) {
  wire::expect_type(r, f, WireType::kLen, what);
  return f.bytes;
}

int64_t int_field(const Reader& r, const Field& f, const char* what) {
  wire::expect_type(r, f, WireType::kVarint, what);
  return static_cast<int64_t>(f.value);
}

// Repeated int64: packed (proto3's default) or one value per field.
void repeated_int(const Reader& r, const Field& f, std::vector<int64_t>& out, const char* what) {
  if (f.type == WireType::kVarint) {
    out.push_back(static_cast<int64_t>(f.value));
    return;
  }
  wire::expect_type(r, f, WireType::kLen, what);
  const auto* p = reinterpret_cast<const uint8_t*>(f.bytes.data());
  const auto* end = p + f.bytes.size();
  while (p < end) out.push_back(static_cast<int64_t>(wire::read_varint(p, end, r.origin())));
}

// LogicalBufferProto: id=1, size=2, defined_at=3 (Location: instruction_name=2, shape_index=3,
// instruction_id=4), color=4.
LogicalBuffer read_logical_buffer(std::string_view msg, const uint8_t* origin) {
  LogicalBuffer out;
  Reader r(msg, origin);
  Field f;
  while (r.next(f)) {
    switch (f.number) {
      case 1:
        out.id = int_field(r, f, "LogicalBufferProto.id");
        break;
      case 2:
        out.size = int_field(r, f, "LogicalBufferProto.size");
        break;
      case 3: {
        Reader loc(len_field(r, f, "LogicalBufferProto.defined_at"), origin);
        Field g;
        while (loc.next(g)) {
          if (g.number == 2) {
            out.instruction_name = len_field(loc, g, "Location.instruction_name");
          } else if (g.number == 3) {
            repeated_int(loc, g, out.shape_index, "Location.shape_index");
          } else if (g.number == 4) {
            out.instruction_id = int_field(loc, g, "Location.instruction_id");
            out.has_instruction_id = true;
          }
        }
        break;
      }
      case 4:
        out.color = int_field(r, f, "LogicalBufferProto.color");
        break;
      default:
        break;
    }
  }
  return out;
}

// BufferAllocationProto: index=1, size=2, is_thread_local=3, is_entry_computation_parameter=5,
// parameter_number=6, maybe_live_out=7, color=8, assigned=9 (logical_buffer_id=1, offset=2,
// size=3), is_tuple=11, is_constant=12.
BufferAllocation read_allocation(std::string_view msg, const uint8_t* origin) {
  BufferAllocation out;
  Reader r(msg, origin);
  Field f;
  while (r.next(f)) {
    switch (f.number) {
      case 1:
        out.index = int_field(r, f, "BufferAllocationProto.index");
        break;
      case 2:
        out.size = int_field(r, f, "BufferAllocationProto.size");
        break;
      case 3:
        out.is_thread_local = int_field(r, f, "BufferAllocationProto.is_thread_local") != 0;
        break;
      case 5:
        out.is_entry_computation_parameter =
            int_field(r, f, "BufferAllocationProto.is_entry_computation_parameter") != 0;
        break;
      case 6:
        out.parameter_number = int_field(r, f, "BufferAllocationProto.parameter_number");
        break;
      case 7:
        out.maybe_live_out = int_field(r, f, "BufferAllocationProto.maybe_live_out") != 0;
        break;
      case 8:
        out.color = int_field(r, f, "BufferAllocationProto.color");
        break;
      case 9: {
        Reader a(len_field(r, f, "BufferAllocationProto.assigned"), origin);
        BufferAllocation::Assigned& as = out.assigned.emplace_back();
        Field g;
        while (a.next(g)) {
          if (g.number == 1) as.logical_buffer_id = int_field(a, g, "Assigned.logical_buffer_id");
          if (g.number == 2) as.offset = int_field(a, g, "Assigned.offset");
          if (g.number == 3) as.size = int_field(a, g, "Assigned.size");
        }
        break;
      }
      case 11:
        out.is_tuple = int_field(r, f, "BufferAllocationProto.is_tuple") != 0;
        break;
      case 12:
        out.is_constant = int_field(r, f, "BufferAllocationProto.is_constant") != 0;
        break;
      default:
        break;
    }
  }
  return out;
}

// HeapSimulatorTrace: events=1 (kind=1, buffer_id=2, computation_name=3, instruction_name=4,
// share_with_canonical_id=5), whole_module_simulation=2, buffer_allocation_index=3.
HeapSimulatorTrace read_trace(std::string_view msg, const uint8_t* origin) {
  HeapSimulatorTrace out;
  Reader r(msg, origin);
  Field f;
  while (r.next(f)) {
    if (f.number == 1) {
      Reader e(len_field(r, f, "HeapSimulatorTrace.events"), origin);
      HeapSimulatorEvent& ev = out.events.emplace_back();
      Field g;
      while (e.next(g)) {
        if (g.number == 1) {
          // Kinds beyond the three known are kept as they are (an analysis says it cannot
          // replay them) rather than wrapped into a known one.
          int64_t kind = int_field(e, g, "HeapSimulatorTrace.Event.kind");
          ev.kind = kind >= 0 && kind < 255 ? static_cast<uint8_t>(kind) : 255;
        } else if (g.number == 2) {
          ev.buffer_id = int_field(e, g, "HeapSimulatorTrace.Event.buffer_id");
        } else if (g.number == 4) {
          ev.instruction_name = len_field(e, g, "HeapSimulatorTrace.Event.instruction_name");
        } else if (g.number == 5) {
          ev.share_with_canonical_id = int_field(e, g, "HeapSimulatorTrace.Event.share_with");
        }
      }
    } else if (f.number == 2) {
      out.whole_module_simulation = int_field(r, f, "HeapSimulatorTrace.whole_module") != 0;
    } else if (f.number == 3) {
      out.buffer_allocation_index = int_field(r, f, "HeapSimulatorTrace.allocation_index");
    }
  }
  return out;
}

}  // namespace

BufferAssignment parse_buffer_assignment(std::string_view serialized, const uint8_t* origin) {
  if (!origin) origin = reinterpret_cast<const uint8_t*>(serialized.data());
  BufferAssignment out;
  Reader r(serialized, origin);
  Field f;
  while (r.next(f)) {
    switch (f.number) {
      case 1:
        out.logical_buffers.push_back(
            read_logical_buffer(len_field(r, f, "BufferAssignmentProto.logical_buffers"), origin));
        break;
      case 3:
        out.allocations.push_back(
            read_allocation(len_field(r, f, "BufferAssignmentProto.buffer_allocations"), origin));
        break;
      case 4:
        out.heap_traces.push_back(
            read_trace(len_field(r, f, "BufferAssignmentProto.heap_simulator_traces"), origin));
        break;
      default:
        break;
    }
  }
  return out;
}

}  // namespace jaxprof
