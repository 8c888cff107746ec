// Whether a device event is a memory copy or fill rather than a kernel computing something,
// decided in one place for every analysis (timeline, summary, kernels, ops categories, export),
// from what the profile says about the event, most direct evidence first:
//   1. its own stats: memcpy_details (a copy) or memset_details (a fill), as CUPTI and the
//      ROCm tracer write them;
//   2. its line: a GPU stream that carries only copies or only fills
//      ("Stream #12(MemcpyD2D)", "Stream #3(Memset)");
//   3. its HLO instruction's opcode: copy, copy-start, copy-done;
//   4. its name, only when the profile says nothing else: names starting with memcpy, memset
//      or copy (CUDA's "Memcpy HtoD", XLA's "CopyDeviceToDevice"), the HIP runtime's copy and
//      fill kernels (__amd_rocclr_copyBuffer, __amd_rocclr_fillBuffer, MEMORY_COPY_*), and names
//      holding htod/dtoh/dtod.
// Categorisation (category.h) calls the opcode and name rules; analyses that hold the event call
// event_memory_op, which applies all four.
#pragma once

#include <cstdint>
#include <string_view>

#include "jaxprof/model/profile.h"

namespace jaxprof {

enum class MemoryOp : uint8_t { kNone, kMemcpy, kMemset };

const char* memory_op_name(MemoryOp op);  // "", "memcpy", "memset"

// Rule 1, from Events::memory_op bits (Events::kMemcpyStat, kMemsetStat).
MemoryOp memory_op_of_stat_bits(uint8_t bits);
// Rule 2: the kinds a GPU stream line's name lists in parentheses.
MemoryOp memory_op_of_line_name(std::string_view line_name);
// Rule 3 (an empty opcode is unknown: kNone).
MemoryOp memory_op_of_opcode(std::string_view opcode);
// Rule 4.
MemoryOp memory_op_of_name(std::string_view name);

// Rules 1 and 2 for the events of one line: what the profile says about an event itself. The
// stats come from the column the importer filled (Line::memory_ops), else from the file when the
// plane may carry them; what depends on the line alone is decided once.
class LineMemoryOps {
 public:
  LineMemoryOps(const Profile& p, uint32_t line);
  MemoryOp operator()(uint32_t e) const {
    if (column_)
      if (MemoryOp op = memory_op_of_stat_bits(p_.events.memory_op[e]); op != MemoryOp::kNone)
        return op;
    if (metadata_)
      if (MemoryOp op =
              memory_op_of_stat_bits(p_.event_metadata[p_.events.metadata[e]].memory_op);
          op != MemoryOp::kNone)
        return op;
    if (read_file_)
      if (MemoryOp op = from_file(e); op != MemoryOp::kNone) return op;
    return of_line_;
  }
  // Whether every answer is kNone without looking at the event.
  bool never() const {
    return !column_ && !read_file_ && !metadata_ && of_line_ == MemoryOp::kNone;
  }

 private:
  MemoryOp from_file(uint32_t e) const;
  const Profile& p_;
  uint32_t plane_ = 0;
  bool column_ = false, read_file_ = false;
  bool metadata_ = false;  // some event metadata of the plane carries the stats
  MemoryOp of_line_ = MemoryOp::kNone;
  StringId names_[2] = {0, 0};
};

MemoryOp event_memory_op_evidence(const Profile& p, uint32_t line, uint32_t e);

// All four rules; `opcode` is the event's HLO opcode when known (else empty).
MemoryOp event_memory_op(const Profile& p, uint32_t line, uint32_t e, std::string_view opcode);

}  // namespace jaxprof
