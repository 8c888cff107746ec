// The HLO instruction a device op event ran, looked up in the profile's HLO:
//   1. the event's hlo_op in its own program (program id, else a unique module name);
//   2. when its program is not in the HLO (autotuning runs compile a fusion as a module of its
//      own, named after it): the instruction of that name, when exactly one module has one;
//   3. when the event names no HLO op (kernels launched from command buffers / CUDA graphs, or
//      helper kernels): its kernel name as XLA derives it from the instruction's ("fusion.1" ->
//      "fusion_1", ROCm's ".kd" suffix dropped), in its own program when known, else in the one
//      module that has it.
// A lookup never guesses between two modules: ambiguous names stay unresolved.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "jaxprof/model/profile.h"

namespace jaxprof {

struct ResolvedInstruction {
  const HloModule* module = nullptr;
  const HloInstruction* instr = nullptr;
  std::string how;  // "" for the event's own hlo_op; else how it was matched
};

class OpInstructions {
 public:
  explicit OpInstructions(const Profile& p) : p_(p) {}
  ResolvedInstruction operator()(uint32_t event);

 private:
  struct Entry {
    const HloModule* module;
    const HloInstruction* instr;
  };
  // Name -> the instructions of every module with that name (built on first use).
  const std::vector<Entry>* by_name(std::string_view name);
  const std::vector<Entry>* by_kernel_name(std::string_view kernel);
  void build();

  const Profile& p_;
  bool built_ = false;
  std::vector<std::string> kernel_names_;  // storage for the keys of by_kernel_
  std::unordered_map<std::string_view, std::vector<Entry>> by_name_;
  std::unordered_map<std::string_view, std::vector<Entry>> by_kernel_;
};

// XLA's kernel name for an instruction name: '.' and '-' become '_'.
std::string kernel_name_of(std::string_view instruction_name);

}  // namespace jaxprof
