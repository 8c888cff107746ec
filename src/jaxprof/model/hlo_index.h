// What the analyses need from XLA's HloProtos: per module, per instruction its opcode, JAX op path,
// source location, stack frames, called computations, shape and collective groups, and what costs
// and categories need (dot and convolution dimension numbers, windows, custom-call targets and
// backend configs, fusion kinds, computation roots). String views point into the buffers that
// carried the protos (kept alive by the Profile that owns the index).
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
  // Elements of the array (1 for a scalar); 0 for tuples and types without array storage.
  // Saturates instead of overflowing.
  uint64_t element_count() const;
  // Text like "f32[256,256]" or "(f32[2], s32[])".
  std::string to_string() const;
};

// DotDimensionNumbers.
struct HloDotDimensions {
  std::vector<int64_t> lhs_contracting, rhs_contracting, lhs_batch, rhs_batch;
};

// WindowDimension, with XLA's defaults (1) for strides and dilations left unset.
struct HloWindowDimension {
  int64_t size = 1;
  int64_t stride = 1;
  int64_t padding_low = 0;
  int64_t padding_high = 0;
  int64_t window_dilation = 1;
  int64_t base_dilation = 1;
};

// ConvolutionDimensionNumbers.
struct HloConvolutionDimensions {
  int64_t input_batch = 0, input_feature = 0;
  int64_t kernel_input_feature = 0, kernel_output_feature = 0;
  int64_t output_batch = 0, output_feature = 0;
  std::vector<int64_t> input_spatial, kernel_spatial, output_spatial;
};

// XLA's short name of a PrimitiveType ("f32", "bf16", "f8e4m3fn"), or nullptr when unknown.
const char* primitive_type_name(int32_t element_type);

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
  uint32_t computation = 0;             // index into HloModule::computations
  std::string_view custom_call_target;  // custom-call only
  // As the producer wrote it: JSON for XLA's GPU and TPU configs, an MLIR attribute dictionary
  // ("{name = 1 : i64, ...}") for typed-FFI custom calls.
  std::string_view backend_config;
  std::string_view fusion_kind;   // "kLoop", "kInput", "kOutput", "kCustom" (fusion only)
  int32_t parameter_number = -1;  // parameter only
  int32_t dot = -1;               // index into HloModule::dots (dot_dimension_numbers), -1 = none
  int32_t convolution = -1;       // index into HloModule::convolutions, -1 = none
  int32_t window = -1;            // index into HloModule::windows, -1 = none
  int32_t feature_group_count = 1;
  int32_t batch_group_count = 1;
  // The highest PrecisionConfig operand precision: 0 DEFAULT, 1 HIGH, 2 HIGHEST.
  uint8_t operand_precision = 0;
};

struct HloComputation {
  std::string_view name;
  int64_t id = 0;
  int64_t root_id = 0;
  uint32_t root = UINT32_MAX;  // index into HloModule::instructions; UINT32_MAX = unknown
  bool is_fusion = false;
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
  std::vector<HloDotDimensions> dots;
  std::vector<HloConvolutionDimensions> convolutions;
  std::vector<std::vector<HloWindowDimension>> windows;
  std::unordered_map<std::string_view, uint32_t> instruction_by_name;
  std::unordered_map<int64_t, uint32_t> instruction_by_id;
  std::unordered_map<int64_t, uint32_t> computation_by_id;
  // The serialized xla.BufferAssignmentProto that came with the module (HloProto field 3), in
  // the caller's buffer; empty when there was none (decode it with parse_buffer_assignment).
  std::string_view buffer_assignment;
  // The bytes it was read from (an xla.HloProto, or an HloModuleProto when `bare_module`), for
  // exports that carry the HLO along.
  std::string_view serialized;
  bool bare_module = false;

  const HloInstruction* find(std::string_view instruction_name) const;
  // "file:line" of the instruction's metadata, or "" when it has none.
  std::string source_line(const HloInstruction& instr) const;
  // Frames from the innermost (the instruction's own) to the outermost caller.
  std::vector<const HloStackFrame*> stack(const HloInstruction& instr) const;
  // The i-th operand, the i-th called computation and a computation's root; null when the proto
  // does not name one (or names one that is not there).
  const HloInstruction* operand(const HloInstruction& instr, size_t i) const;
  const HloComputation* called(const HloInstruction& instr, size_t i) const;
  const HloInstruction* root(const HloComputation& comp) const;
  const HloDotDimensions* dot_dimensions(const HloInstruction& instr) const {
    return instr.dot >= 0 ? &dots[instr.dot] : nullptr;
  }
  const HloConvolutionDimensions* convolution_dimensions(const HloInstruction& instr) const {
    return instr.convolution >= 0 ? &convolutions[instr.convolution] : nullptr;
  }
  const std::vector<HloWindowDimension>* window(const HloInstruction& instr) const {
    return instr.window >= 0 ? &windows[instr.window] : nullptr;
  }
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

  // By program id first (exact), else by module name when exactly one module has that name and
  // it is not known as another program (a lookup never mixes two programs).
  const HloModule* find(int64_t program_id, std::string_view module_name) const;
  const std::vector<std::unique_ptr<HloModule>>& modules() const { return modules_; }
  bool empty() const { return modules_.empty(); }

 private:
  std::vector<std::unique_ptr<HloModule>> modules_;
  std::unordered_map<int64_t, const HloModule*> by_program_id_;
  std::unordered_multimap<std::string_view, const HloModule*> by_name_;
};

}  // namespace jaxprof
