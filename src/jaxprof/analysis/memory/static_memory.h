// Static memory per compiled program, from XLA's buffer assignment (the HloProto's
// buffer_assignment, in the profile's /host:metadata plane or an HLO dump passed beside it): what
// the program needs for its arguments, outputs, temporaries and constants, its peak heap, and the
// largest buffers live at that peak with their HLO instruction, JAX op path and source line, per
// memory space. The same figures as XProf's memory viewer and jax's compiled.memory_analysis().
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "jaxprof/model/hlo_index.h"

namespace jaxprof {

struct StaticMemoryOptions {
  size_t top = 10;     // buffers listed at each peak (0 = all)
  std::string module;  // only modules whose name contains this ("" = all)
};

// A logical buffer live at the peak.
struct StaticBuffer {
  int64_t logical_buffer_id = 0;
  int64_t bytes = 0;
  std::string kind;         // argument, output, temporary, constant, thread-local
  std::string instruction;  // defining instruction, with "{i,j}" for a tuple element
  std::string opcode;
  std::string shape;    // of the buffer (the tuple element at the shape index)
  std::string op_name;  // JAX op path from the instruction's metadata
  std::string source;   // "file:line"
};

// One memory space (buffer color: 0 is the device's default memory, 5 the host's with XLA's
// default colorer).
struct MemorySpaceUsage {
  int64_t color = 0;
  std::string label;
  // Sums of buffer allocation sizes by what they hold, as XLA's CompiledMemoryStats counts them
  // (an allocation that is both an argument and an output counts in both, and in alias_bytes).
  uint64_t argument_bytes = 0;
  uint64_t output_bytes = 0;
  uint64_t alias_bytes = 0;
  uint64_t temp_bytes = 0;
  uint64_t constant_bytes = 0;
  uint64_t thread_local_bytes = 0;
  uint64_t total_allocation_bytes = 0;  // all but thread-local (per-thread scratch)
  uint32_t allocations = 0;
  // Allocations live for the whole run (arguments, outputs, constants), counted once each.
  uint64_t indefinite_bytes = 0;
  // The heap simulator's peak (temporaries live at once, in program order) plus the indefinite
  // bytes: XProf's "peak heap". Unknown when the buffer assignment has no usable trace.
  std::optional<uint64_t> peak_heap_bytes;
  std::optional<uint64_t> heap_simulator_peak_bytes;
  std::string peak_instruction;  // the instruction the simulator was at when the peak was set
  uint64_t buffers_at_peak = 0;  // logical buffers live at the peak (before --top)
  std::vector<StaticBuffer> largest_at_peak;  // by size, descending
};

struct ProgramMemory {
  std::string module;
  int64_t program_id = -1;               // -1 when unknown (an HLO file)
  std::vector<MemorySpaceUsage> spaces;  // by color
  std::vector<std::string> notes;
};

struct StaticMemory {
  std::vector<ProgramMemory> programs;      // by module name, then program id
  uint32_t modules_without_assignment = 0;  // HLO modules that carry none
};

StaticMemory compute_static_memory(const HloIndex& hlo, const StaticMemoryOptions& options);

// compute_static_memory in two halves, for hosts read one by one: each module of a host's index
// with what tells it apart, then the hosts' modules merged as one index of all of them holds
// them (the first host's copy of a program id; the HLO files given beside the profiles, which
// every host reads, once) and reduced as compute_static_memory reduces them.
struct StaticMemoryModule {
  int64_t program_id = -1;
  std::string name;
  bool has_assignment = false;
  // The buffer assignment's bytes, hashed with their size: two modules of one name with the same
  // assignment are one program (an HLO file repeating a profile's).
  uint64_t assignment_hash = 0;
  size_t assignment_size = 0;
  std::shared_ptr<const ProgramMemory> memory;  // when it has an assignment and passes --module
};

// Programs already worked out, shared by the hosts of a set (any thread): hosts that hold the same
// program (by program id and the bytes of its proto) share one ProgramMemory.
class ProgramMemoryCache {
 public:
  std::shared_ptr<const ProgramMemory> get(const HloModule& m, const StaticMemoryOptions& o);

 private:
  struct Key {
    int64_t program_id;
    uint64_t hash;
    size_t size;
    auto operator<=>(const Key&) const = default;
  };
  std::mutex lock_;
  std::map<Key, std::shared_ptr<const ProgramMemory>> programs_;
};

// `cache` may be null (the programs are worked out here).
std::vector<StaticMemoryModule> static_memory_modules(const HloIndex& hlo,
                                                      const StaticMemoryOptions& options,
                                                      ProgramMemoryCache* cache = nullptr);
// `hosts` in host order.
StaticMemory merge_static_memory(const std::vector<std::vector<StaticMemoryModule>>& hosts);

}  // namespace jaxprof
