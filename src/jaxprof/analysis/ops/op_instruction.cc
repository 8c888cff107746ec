#include "jaxprof/analysis/ops/op_instruction.h"

namespace jaxprof {

std::string kernel_name_of(std::string_view instruction_name) {
  std::string out(instruction_name);
  for (char& c : out)
    if (c == '.' || c == '-') c = '_';
  return out;
}

void OpInstructions::build() {
  built_ = true;
  size_t total = 0;
  for (const auto& m : p_.hlo.modules()) total += m->instructions.size();
  kernel_names_.reserve(total);  // the views into it must not move
  for (const auto& m : p_.hlo.modules()) {
    for (const HloInstruction& in : m->instructions) {
      // Only instructions that can run as an op: not those inside fused computations.
      const HloComputation& comp = m->computations[in.computation];
      if (comp.is_fusion || in.opcode == "parameter") continue;
      by_name_[in.name].push_back({m.get(), &in});
      const std::string& k = kernel_names_.emplace_back(kernel_name_of(in.name));
      by_kernel_[k].push_back({m.get(), &in});
    }
  }
}

const std::vector<OpInstructions::Entry>* OpInstructions::by_name(std::string_view name) {
  if (!built_) build();
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : &it->second;
}

const std::vector<OpInstructions::Entry>* OpInstructions::by_kernel_name(std::string_view kernel) {
  if (!built_) build();
  if (kernel.ends_with(".kd")) kernel.remove_suffix(3);
  auto it = by_kernel_.find(kernel);
  return it == by_kernel_.end() ? nullptr : &it->second;
}

namespace {

// An HLO file is indexed by module name only. When its HloModuleProto id is the program id of
// another program of that name in the profile (XLA's GPU program id is that id), it is that
// program's HLO: another program of the name (a recompile for other shapes) must not take its
// costs. TPU ids are fingerprints, never a module id: nothing is refused there.
bool other_programs_hlo(const Profile& p, const HloModule* m, ProgramId event_program,
                        std::string_view module_name) {
  if (!m || m->program_id != HloIndex::kUnknownProgramId || m->module_id == 0 ||
      event_program == kNoProgram)
    return false;
  if (m->module_id == hlo_program_key(event_program)) return false;
  for (const ModuleKey& k : p.modules)
    if (k.program_id != kNoProgram && hlo_program_key(k.program_id) == m->module_id &&
        p.str(k.name) == module_name)
      return true;
  return false;
}

// The HLO file of the event's own program among files that share its module name: the one whose
// HloModuleProto id is the program id (GPU). An exact match, not a guess between them.
const HloModule* file_module_of_program(const Profile& p, const ModuleKey& mk) {
  const std::string_view name = p.str(mk.name);
  for (const auto& m : p.hlo.modules())
    if (m->program_id == HloIndex::kUnknownProgramId && m->module_id != 0 &&
        m->module_id == hlo_program_key(mk.program_id) && m->name == name)
      return m.get();
  return nullptr;
}

}  // namespace

ResolvedInstruction OpInstructions::operator()(uint32_t e) {
  ResolvedInstruction r;
  if (p_.hlo.empty()) return r;
  const Events& ev = p_.events;
  const ModuleKey& mk = p_.modules[ev.module[e]];
  const HloModule* own =
      ev.module[e] != 0 ? p_.hlo.find(hlo_program_key(mk.program_id), p_.str(mk.name)) : nullptr;
  const bool known_program = ev.module[e] != 0 && mk.program_id != kNoProgram;
  // Only a module of the event's own name can be another program of it (a recompile); an
  // instruction found in a module of another name (autotuning) is matched as before.
  auto foreign = [&](const HloModule* m) {
    return known_program && m && m->name == p_.str(mk.name) &&
           other_programs_hlo(p_, m, mk.program_id, m->name);
  };
  if (foreign(own)) own = nullptr;
  if (!own && known_program) own = file_module_of_program(p_, mk);
  if (ev.hlo_op[e] != 0) {
    const std::string_view op = p_.str(ev.hlo_op[e]);
    if (own) {
      r.module = own;
      r.instr = own->find(op);
      if (!r.instr) r.module = nullptr;
      return r;
    }
    if (const auto* list = by_name(op);
        list && list->size() == 1 && !foreign(list->front().module)) {
      r.module = list->front().module;
      r.instr = list->front().instr;
      r.how = "by name, in " + std::string(r.module->name);
    }
    return r;
  }
  const auto* list = by_kernel_name(p_.event_name(e));
  if (!list) return r;
  const Entry* match = nullptr;
  if (own) {
    for (const Entry& x : *list)
      if (x.module == own) match = &x;
  } else if (list->size() == 1 && !foreign(list->front().module)) {
    match = &list->front();
  }
  if (match) {
    r.module = match->module;
    r.instr = match->instr;
    r.how = "by kernel name";
  }
  return r;
}

}  // namespace jaxprof
