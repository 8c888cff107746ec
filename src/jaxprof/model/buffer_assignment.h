// XLA's buffer assignment for one compiled module (xla.BufferAssignmentProto, the HloProto's
// field 3): which logical buffers (HLO values) live in which buffer allocations, and the heap
// simulator's trace of when each temporary buffer is allocated and freed in program order. It is
// what XProf's memory viewer reads; decoded straight from the wire, only the fields used.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace jaxprof {

// LogicalBufferProto: one HLO value, defined by an instruction at a shape index.
struct LogicalBuffer {
  int64_t id = 0;
  int64_t size = 0;
  int64_t color = 0;  // the memory space with XLA's default colorer
  int64_t instruction_id = 0;
  bool has_instruction_id = false;    // older producers name the instruction instead
  std::string_view instruction_name;  // Location.instruction_name (deprecated field)
  std::vector<int64_t> shape_index;
};

// BufferAllocationProto: one contiguous allocation the executable gets at run time.
struct BufferAllocation {
  struct Assigned {
    int64_t logical_buffer_id = 0;
    int64_t offset = 0;
    int64_t size = 0;
  };
  int64_t index = 0;
  int64_t size = 0;
  int64_t color = 0;
  int64_t parameter_number = 0;
  bool is_thread_local = false;
  bool is_tuple = false;
  bool is_entry_computation_parameter = false;
  bool is_constant = false;
  bool maybe_live_out = false;
  std::vector<Assigned> assigned;

  // Allocated for the whole run rather than reused within it: arguments, outputs, constants.
  // Thread-local allocations (per-thread scratch of the CPU backend) are not part of the heap:
  // XProf's memory viewer leaves them out of its peak, XLA out of its total.
  bool indefinite() const {
    return !is_thread_local && (is_entry_computation_parameter || is_constant || maybe_live_out);
  }
  // XLA's BufferAllocation::IsPreallocatedTempBuffer: what compiled.memory_analysis() counts as
  // temporaries.
  bool preallocated_temp() const {
    return !is_entry_computation_parameter && !maybe_live_out && !is_thread_local && !is_constant;
  }
};

// HeapSimulatorTrace: ALLOC / FREE / SHARE_WITH events in the order the simulator met them.
struct HeapSimulatorEvent {
  enum Kind : uint8_t { kAlloc = 0, kFree = 1, kShareWith = 2 };
  uint8_t kind = kAlloc;  // other values are kept and reported as unknown
  int64_t buffer_id = 0;
  int64_t share_with_canonical_id = 0;
  std::string_view instruction_name;
};

struct HeapSimulatorTrace {
  std::vector<HeapSimulatorEvent> events;
  bool whole_module_simulation = false;
  int64_t buffer_allocation_index = 0;
};

struct BufferAssignment {
  std::vector<LogicalBuffer> logical_buffers;
  std::vector<BufferAllocation> allocations;
  std::vector<HeapSimulatorTrace> heap_traces;
};

// Decodes a serialized xla.BufferAssignmentProto. Views point into `serialized`. Throws
// InputError (no file name, offsets relative to `origin` when given) on corrupt bytes.
BufferAssignment parse_buffer_assignment(std::string_view serialized,
                                         const uint8_t* origin = nullptr);

}  // namespace jaxprof
