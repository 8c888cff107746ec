#include "jaxprof/analysis/ops/event_category.h"

#include "jaxprof/analysis/ops/memory_op.h"

namespace jaxprof {

const HloInstruction* event_instruction(const Profile& p, uint32_t e) {
  const Events& ev = p.events;
  if (ev.hlo_op[e] == 0) return nullptr;
  const ModuleKey& mk = p.modules[ev.module[e]];
  const HloModule* mod = p.hlo.find(hlo_program_key(mk.program_id), p.str(mk.name));
  return mod ? mod->find(p.str(ev.hlo_op[e])) : nullptr;
}

OpCategory op_category(const Profile& p, uint32_t e) {
  const Events& ev = p.events;
  if (ev.hlo_op[e] != 0) {
    const ModuleKey& mk = p.modules[ev.module[e]];
    if (const HloModule* mod = p.hlo.find(hlo_program_key(mk.program_id), p.str(mk.name)))
      if (const HloInstruction* instr = mod->find(p.str(ev.hlo_op[e])))
        return categorize_instruction(*mod, *instr);
  }
  return categorize({}, p.event_name(e));
}

OpCategory event_category(const Profile& p, uint32_t line, uint32_t e) {
  if (event_memory_op_evidence(p, line, e) != MemoryOp::kNone) return OpCategory::kMemcpy;
  return op_category(p, e);
}

}  // namespace jaxprof
