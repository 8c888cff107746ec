// HloProto (`*.hlo.pb`, /host:metadata's "Hlo Proto" stats, nsys-jax's dumps), wrapped and bare,
// and what analyses ask of a module: instructions by name and id, source lines, stacks, shapes.
#include "fuzz_common.h"
#include "jaxprof/model/hlo_index.h"

using namespace jaxprof;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  for (bool bare : {false, true}) {
    std::unique_ptr<HloModule> m;
    try {
      m = HloIndex::parse(bytes, bare);
    } catch (const InputError&) {
      continue;
    }
    for (const HloInstruction& instr : m->instructions) {
      (void)m->source_line(instr);
      for (const HloStackFrame* f : m->stack(instr)) (void)f->line;
      (void)instr.shape.to_string();
      (void)instr.shape.byte_size();
      fuzz::check(m->find(instr.name) != nullptr, "an instruction is not found by its name");
    }
    HloIndex index;
    const HloModule& added = index.insert(std::move(m), 7);
    fuzz::check(index.find(7, {}) == &added, "a module is not found by its program id");
    (void)index.find(-1, added.name);
  }
  return 0;
}
