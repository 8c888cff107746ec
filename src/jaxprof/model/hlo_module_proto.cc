// Decodes xla.HloProto / HloModuleProto straight from the wire (no libprotobuf): the module, its
// computations (each instruction by hlo_instruction_proto.cc) and its stack frame index, then the
// module's lookup tables. Only the fields the analyses use are read; everything else is skipped.
#include <utility>

#include "jaxprof/io/huge_pages.h"
#include "jaxprof/model/hlo_proto_decode.h"

namespace jaxprof {
namespace {

using hlo_proto::at_1based;
using hlo_proto::corrupt;
using hlo_proto::read_instruction;
using hlo_proto::read_string;
using hlo_proto::read_varint_field;
using wire::Field;
using wire::Reader;
using wire::WireType;

// HloComputationProto: name=1, instructions=2, id=5, root_id=6, is_fusion_computation=7.
void read_computation(std::string_view msg, const uint8_t* origin, HloModule& m) {
  HloComputation comp;
  const auto comp_index = static_cast<uint32_t>(m.computations.size());
  Reader r(msg, origin);
  Field f;
  while (r.next(f)) {
    switch (f.number) {
      case 1:
        comp.name = read_string(r, f, "HloComputationProto.name");
        break;
      case 2: {
        std::string_view sub = read_string(r, f, "HloComputationProto.instructions");
        comp.instructions.push_back(static_cast<uint32_t>(m.instructions.size()));
        HloInstruction& instr = m.instructions.emplace_back();
        instr.computation = comp_index;
        read_instruction(sub, origin, m, instr);
        break;
      }
      case 5:
        comp.id = static_cast<int64_t>(read_varint_field(r, f, "HloComputationProto.id"));
        break;
      case 6:
        comp.root_id = static_cast<int64_t>(read_varint_field(r, f, "HloComputationProto.root_id"));
        break;
      case 7:
        comp.is_fusion = read_varint_field(r, f, "HloComputationProto.is_fusion_computation") != 0;
        break;
      default:
        break;
    }
  }
  m.computations.push_back(std::move(comp));
}

// StackFrameIndexProto, kept flat until the whole module is read (its arrays may arrive in any
// order, even split over several occurrences of the field).
struct FrameIndex {
  struct Location {
    int32_t file = 0, function = 0, line = 0, column = 0;
  };
  struct Frame {
    int32_t location = 0, parent = 0;
  };
  std::vector<std::string_view> files, functions;
  std::vector<Location> locations;
  std::vector<Frame> frames;
};

// file_names=1, function_names=2, file_locations=3 (file_name_id=1, function_name_id=2, line=3,
// column=4), stack_frames=4 (file_location_id=1, parent_frame_id=2).
void read_frame_index(std::string_view msg, const uint8_t* origin, FrameIndex& out) {
  Reader r(msg, origin);
  Field f;
  while (r.next(f)) {
    switch (f.number) {
      case 1:
        out.files.push_back(read_string(r, f, "StackFrameIndex.file_names"));
        break;
      case 2:
        out.functions.push_back(read_string(r, f, "StackFrameIndex.function_names"));
        break;
      case 3: {
        Reader sub(read_string(r, f, "StackFrameIndex.file_locations"), origin);
        FrameIndex::Location& loc = out.locations.emplace_back();
        Field g;
        while (sub.next(g)) {
          int32_t* dst = g.number == 1   ? &loc.file
                         : g.number == 2 ? &loc.function
                         : g.number == 3 ? &loc.line
                         : g.number == 4 ? &loc.column
                                         : nullptr;
          if (dst) *dst = static_cast<int32_t>(read_varint_field(sub, g, "FileLocation field"));
        }
        break;
      }
      case 4: {
        Reader sub(read_string(r, f, "StackFrameIndex.stack_frames"), origin);
        FrameIndex::Frame& frame = out.frames.emplace_back();
        Field g;
        while (sub.next(g)) {
          if (g.number == 1) {
            frame.location = static_cast<int32_t>(read_varint_field(sub, g, "StackFrame field"));
          } else if (g.number == 2) {
            frame.parent = static_cast<int32_t>(read_varint_field(sub, g, "StackFrame field"));
          }
        }
        break;
      }
      default:
        break;
    }
  }
}

void resolve_frames(const FrameIndex& idx, HloModule& m) {
  m.stack_frames.reserve(idx.frames.size());
  for (const FrameIndex::Frame& fr : idx.frames) {
    HloStackFrame& out = m.stack_frames.emplace_back();
    if (at_1based(idx.frames, fr.parent)) out.parent = fr.parent;
    const FrameIndex::Location* loc = at_1based(idx.locations, fr.location);
    if (!loc) continue;
    if (const auto* file = at_1based(idx.files, loc->file)) out.file = *file;
    if (const auto* fn = at_1based(idx.functions, loc->function)) out.function = *fn;
    out.line = loc->line;
    out.column = loc->column;
  }
}

// HloModuleProto: name=1, computations=3, id=5, entry_computation_id=6, stack_frame_index=17.
// Called once per occurrence of the message, so repeated occurrences merge as protobuf's would.
void read_module(std::string_view msg, const uint8_t* origin, HloModule& m, FrameIndex& frames) {
  // Counting computations and instructions first (a walk over two levels of field headers) lets
  // their vectors be allocated once: growing them would move every instruction several times.
  size_t computations = 0, instructions = 0;
  {
    Reader r(msg, origin);
    Field f;
    while (r.next(f)) {
      if (f.number != 3) continue;
      ++computations;
      Reader c(read_string(r, f, "HloModuleProto.computations"), origin);
      Field g;
      while (c.next(g)) instructions += g.number == 2;
    }
  }
  m.computations.reserve(m.computations.size() + computations);
  m.instructions.reserve(m.instructions.size() + instructions);
  advise_huge_pages(m.instructions.data(), m.instructions.capacity() * sizeof(HloInstruction));
  Reader r(msg, origin);
  Field f;
  while (r.next(f)) {
    switch (f.number) {
      case 1:
        m.name = read_string(r, f, "HloModuleProto.name");
        break;
      case 3:
        read_computation(read_string(r, f, "HloModuleProto.computations"), origin, m);
        break;
      case 5:
        m.module_id = static_cast<int64_t>(read_varint_field(r, f, "HloModuleProto.id"));
        break;
      case 6:
        m.entry_computation_id =
            static_cast<int64_t>(read_varint_field(r, f, "HloModuleProto.entry_computation_id"));
        break;
      case 17:
        read_frame_index(read_string(r, f, "HloModuleProto.stack_frame_index"), origin, frames);
        break;
      default:
        break;
    }
  }
}

void finish_module(const FrameIndex& frames, HloModule& m) {
  // Every compiled module has at least its entry computation; bytes that parse as protobuf but
  // carry none are not an HLO module (most likely garbage).
  if (m.computations.empty()) corrupt(-1, "HloModuleProto has no computations");
  resolve_frames(frames, m);

  m.instruction_by_name.reserve(m.instructions.size());
  m.instruction_by_id.reserve(m.instructions.size());
  for (uint32_t i = 0; i < m.instructions.size(); ++i) {
    // emplace keeps the first on duplicates (XLA names and ids are unique within a module).
    m.instruction_by_name.emplace(m.instructions[i].name, i);
    m.instruction_by_id.emplace(m.instructions[i].id, i);
  }
  m.computation_by_id.reserve(m.computations.size());
  for (uint32_t i = 0; i < m.computations.size(); ++i) {
    HloComputation& comp = m.computations[i];
    m.computation_by_id.emplace(comp.id, i);
    // The root must be one of the computation's own instructions; XLA writes the last
    // instruction as the root when root_id is unset (old protos).
    for (uint32_t idx : comp.instructions)
      if (m.instructions[idx].id == comp.root_id) comp.root = idx;
    if (comp.root == UINT32_MAX && comp.root_id == 0 && !comp.instructions.empty())
      comp.root = comp.instructions.back();
  }
}

}  // namespace

std::unique_ptr<HloModule> HloIndex::parse(std::string_view serialized, bool bare_module) {
  auto module = std::make_unique<HloModule>();
  FrameIndex frames;
  const auto* origin = reinterpret_cast<const uint8_t*>(serialized.data());
  if (bare_module) {
    read_module(serialized, origin, *module, frames);
  } else {
    // HloProto: hlo_module=1, buffer_assignment=3 (kept undecoded for the memory analysis).
    Reader r(serialized, origin);
    Field f;
    bool found = false;
    while (r.next(f)) {
      if (f.number == 3 && f.type == WireType::kLen) module->buffer_assignment = f.bytes;
      if (f.number != 1) continue;
      read_module(read_string(r, f, "HloProto.hlo_module"), origin, *module, frames);
      found = true;
    }
    if (!found) corrupt(-1, "HloProto has no hlo_module");
  }
  finish_module(frames, *module);
  module->serialized = serialized;
  module->bare_module = bare_module;
  return module;
}

}  // namespace jaxprof
