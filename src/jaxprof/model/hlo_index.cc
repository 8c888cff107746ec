// The index over decoded HLO modules (by program id, else by module name) and the lookups within
// one module. Decoding is in hlo_module_proto.cc.
#include "jaxprof/model/hlo_index.h"

#include <iterator>

#include "jaxprof/model/hlo_proto_decode.h"

namespace jaxprof {

using hlo_proto::at_1based;

const HloInstruction* HloModule::find(std::string_view instruction_name) const {
  auto it = instruction_by_name.find(instruction_name);
  return it == instruction_by_name.end() ? nullptr : &instructions[it->second];
}

std::string HloModule::source_line(const HloInstruction& instr) const {
  std::string_view file = instr.source_file;
  int32_t line = instr.source_line;
  // Some producers leave source_file empty and only set the frame; its innermost frame is the same
  // place.
  if (file.empty()) {
    if (const HloStackFrame* frame = at_1based(stack_frames, instr.stack_frame_id)) {
      file = frame->file;
      line = frame->line;
    }
  }
  if (file.empty()) return {};
  std::string out(file);
  out += ':';
  out += std::to_string(line);
  return out;
}

const HloInstruction* HloModule::operand(const HloInstruction& instr, size_t i) const {
  if (i >= instr.operand_ids.size()) return nullptr;
  auto it = instruction_by_id.find(instr.operand_ids[i]);
  return it == instruction_by_id.end() ? nullptr : &instructions[it->second];
}

const HloComputation* HloModule::called(const HloInstruction& instr, size_t i) const {
  if (i >= instr.called_computation_ids.size()) return nullptr;
  auto it = computation_by_id.find(instr.called_computation_ids[i]);
  return it == computation_by_id.end() ? nullptr : &computations[it->second];
}

const HloInstruction* HloModule::root(const HloComputation& comp) const {
  return comp.root < instructions.size() ? &instructions[comp.root] : nullptr;
}

std::vector<const HloStackFrame*> HloModule::stack(const HloInstruction& instr) const {
  std::vector<const HloStackFrame*> out;
  int64_t id = instr.stack_frame_id;
  // A corrupt index can loop; no real chain is longer than the number of frames.
  while (const HloStackFrame* frame = at_1based(stack_frames, id)) {
    if (out.size() >= stack_frames.size()) break;
    out.push_back(frame);
    id = frame->parent;
  }
  return out;
}

const HloModule& HloIndex::add(std::string_view serialized, int64_t program_id, bool bare_module) {
  if (program_id != kUnknownProgramId) {
    // Multi-host profiles repeat the same program's proto; one copy is enough.
    auto it = by_program_id_.find(program_id);
    if (it != by_program_id_.end()) return *it->second;
  }
  return insert(parse(serialized, bare_module), program_id);
}

const HloModule& HloIndex::insert(std::unique_ptr<HloModule> module, int64_t program_id) {
  if (program_id != kUnknownProgramId) {
    auto it = by_program_id_.find(program_id);
    if (it != by_program_id_.end()) return *it->second;
  }
  module->program_id = program_id;
  const HloModule* m = module.get();
  modules_.push_back(std::move(module));
  if (program_id != kUnknownProgramId) by_program_id_.emplace(program_id, m);
  by_name_.emplace(m->name, m);
  return *m;
}

const HloModule* HloIndex::find(int64_t program_id, std::string_view module_name) const {
  if (program_id != kUnknownProgramId) {
    auto it = by_program_id_.find(program_id);
    if (it != by_program_id_.end()) return it->second;
  }
  if (module_name.empty()) return nullptr;
  auto [first, last] = by_name_.equal_range(module_name);
  if (first == last || std::next(first) != last) return nullptr;  // unknown or ambiguous
  // A module indexed under another program id is another program of that name: its
  // instructions must not describe this one's.
  if (program_id != kUnknownProgramId && first->second->program_id != kUnknownProgramId)
    return nullptr;
  return first->second;
}

}  // namespace jaxprof
