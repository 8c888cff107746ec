// What the analyses need from XLA's HloProtos: per module, per instruction its opcode, JAX op path,
// source location, stack frames, called computations, shape and collective groups. String views
// point into the buffers that carried the protos (kept alive by the Profile that owns the index).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace jaxprof {

// xla.ShapeProto reduced to what sizes and labels need. Tuples keep their elements.
struct HloShape {
  int32_t element_type = 0;  // xla.PrimitiveType number
  std::vector<int64_t> dimensions;
  std::vector<HloShape> tuple_shapes;

  bool is_tuple() const { return element_type == 13; }  // TUPLE
  // Bytes of the array (or the sum over tuple elements); 0 for opaque/token types.
  uint64_t byte_size() const;
  // Text like "f32[256,256]" or "(f32[2], s32[])".
  std::string to_string() const;
};

struct HloInstruction {
  std::string_view name;
  std::string_view opcode;
  int64_t id = 0;
  HloShape shape;
  // OpMetadata
  std::string_view op_type;
  std::string_view op_name;  // the JAX op path, e.g. "jit(train_step)/dot_general"
  std::string_view source_file;
  int32_t source_line = 0;
  int32_t stack_frame_id = 0;  // 1-based into HloModule::stack_frames, 0 = none
  std::vector<int64_t> operand_ids;
  std::vector<int64_t> called_computation_ids;
  // Collectives: replica groups (each a list of replica/device ids); empty when not a collective
  // or when the groups are given in iota form and could not be expanded.
  std::vector<std::vector<int64_t>> replica_groups;
  uint32_t computation = 0;  // index into HloModule::computations
};

struct HloComputation {
  std::string_view name;
  int64_t id = 0;
  std::vector<uint32_t> instructions;  // indices into HloModule::instructions
};

// One resolved stack frame (StackFrameIndexProto), outermost last via `parent`.
struct HloStackFrame {
  std::string_view file;
  std::string_view function;
  int32_t line = 0;
  int32_t column = 0;
  int32_t parent = 0;  // 1-based frame id, 0 = none
};

struct HloModule {
  std::string_view name;
  int64_t program_id = -1;  // -1 when unknown; TPU fingerprints (uint64) keep their bit pattern
  int64_t module_id = 0;    // HloModuleProto.id (equals the program id on GPU, not on TPU)
  int64_t entry_computation_id = 0;
  std::vector<HloInstruction> instructions;
  std::vector<HloComputation> computations;
  std::vector<HloStackFrame> stack_frames;  // index = frame id - 1
  std::unordered_map<std::string_view, uint32_t> instruction_by_name;
  std::unordered_map<int64_t, uint32_t> instruction_by_id;
  std::unordered_map<int64_t, uint32_t> computation_by_id;
  // The bytes it was read from (an xla.HloProto, or an HloModuleProto when `bare_module`), for
  // exports that carry the HLO along.
  std::string_view serialized;
  bool bare_module = false;

  const HloInstruction* find(std::string_view instruction_name) const;
  // "file:line" of the instruction's metadata, or "" when it has none.
  std::string source_line(const HloInstruction& instr) const;
  // Frames from the innermost (the instruction's own) to the outermost caller.
  std::vector<const HloStackFrame*> stack(const HloInstruction& instr) const;
};

class HloIndex {
 public:
  // -1 is the only "unknown" value: other negative ids are real (TPU program ids are uint64
  // fingerprints carried as int64 bit patterns).
  static constexpr int64_t kUnknownProgramId = -1;

  // Decodes a serialized xla.HloProto (or a bare HloModuleProto when `bare_module` is true) and
  // adds it. `program_id` == kUnknownProgramId means unknown (then only name lookups find it);
  // adding a program id that is already indexed returns the module already there. Throws InputError
  // on a corrupt proto (with an empty file name: the caller names the file).
  const HloModule& add(std::string_view serialized, int64_t program_id, bool bare_module = false);
  // add() in two steps, so that several protos can be decoded on threads of their own: parse()
  // touches no index (safe to call concurrently); insert() adds what it returned.
  static std::unique_ptr<HloModule> parse(std::string_view serialized, bool bare_module = false);
  const HloModule& insert(std::unique_ptr<HloModule> module, int64_t program_id);

  // By program id first (exact), else by module name when exactly one module has that name.
  const HloModule* find(int64_t program_id, std::string_view module_name) const;
  const std::vector<std::unique_ptr<HloModule>>& modules() const { return modules_; }
  bool empty() const { return modules_.empty(); }

 private:
  std::vector<std::unique_ptr<HloModule>> modules_;
  std::unordered_map<int64_t, const HloModule*> by_program_id_;
  std::unordered_multimap<std::string_view, const HloModule*> by_name_;
};

}  // namespace jaxprof
