#include "jaxprof/analysis/ops/memory_op.h"

#include <cctype>
#include <string>

namespace jaxprof {

namespace {

bool starts_with_nocase(std::string_view s, std::string_view prefix) {
  if (s.size() < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(s[i])) != prefix[i]) return false;
  return true;
}

bool contains_nocase(std::string_view s, std::string_view needle) {
  if (needle.size() > s.size()) return false;
  for (size_t i = 0; i + needle.size() <= s.size(); ++i)
    if (starts_with_nocase(s.substr(i), needle)) return true;
  return false;
}

}  // namespace

const char* memory_op_name(MemoryOp op) {
  switch (op) {
    case MemoryOp::kNone:
      return "";
    case MemoryOp::kMemcpy:
      return "memcpy";
    case MemoryOp::kMemset:
      return "memset";
  }
  return "";
}

MemoryOp memory_op_of_stat_bits(uint8_t bits) {
  if (bits & Events::kMemcpyStat) return MemoryOp::kMemcpy;
  if (bits & Events::kMemsetStat) return MemoryOp::kMemset;
  return MemoryOp::kNone;
}

MemoryOp memory_op_of_line_name(std::string_view name) {
  // "Stream #12(MemcpyD2D,MemcpyOther)": the parenthesised list says what the stream carried.
  if (!name.starts_with("Stream #")) return MemoryOp::kNone;
  size_t open = name.find('('), close = name.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close <= open + 1)
    return MemoryOp::kNone;
  std::string_view kinds = name.substr(open + 1, close - open - 1);
  bool copies = false, fills = false;
  while (!kinds.empty()) {
    size_t comma = kinds.find(',');
    std::string_view kind = kinds.substr(0, comma);
    while (!kind.empty() && kind.front() == ' ') kind.remove_prefix(1);
    if (kind.starts_with("Memcpy"))
      copies = true;
    else if (kind.starts_with("Memset"))
      fills = true;
    else
      return MemoryOp::kNone;  // kernels (or anything else) run there too
    kinds = comma == std::string_view::npos ? std::string_view() : kinds.substr(comma + 1);
  }
  if (copies == fills) return MemoryOp::kNone;  // both (or neither): the line cannot say
  return copies ? MemoryOp::kMemcpy : MemoryOp::kMemset;
}

MemoryOp memory_op_of_opcode(std::string_view opcode) {
  if (opcode == "copy" || opcode == "copy-start" || opcode == "copy-done")
    return MemoryOp::kMemcpy;
  return MemoryOp::kNone;
}

MemoryOp memory_op_of_name(std::string_view name) {
  if (starts_with_nocase(name, "memset") || starts_with_nocase(name, "__amd_rocclr_fillbuffer") ||
      contains_nocase(name, "fillbuffer"))
    return MemoryOp::kMemset;
  if (starts_with_nocase(name, "memcpy") || starts_with_nocase(name, "copy") ||
      starts_with_nocase(name, "memory_copy_") || contains_nocase(name, "copybuffer") ||
      contains_nocase(name, "copy_buffer") || contains_nocase(name, "memcpy") ||
      contains_nocase(name, "htod") || contains_nocase(name, "dtoh") ||
      contains_nocase(name, "dtod"))
    return MemoryOp::kMemcpy;
  return MemoryOp::kNone;
}

LineMemoryOps::LineMemoryOps(const Profile& p, uint32_t li) : p_(p) {
  const Line& line = p.lines[li];
  plane_ = line.plane;
  column_ = line.memory_ops;
  // Importers that keep no column (Chrome traces, archives): the event's stats, when the plane
  // may have them.
  read_file_ = !column_ && (p.plane_may_have_stat(line.plane, "memcpy_details") ||
                            p.plane_may_have_stat(line.plane, "memset_details"));
  if (read_file_) {
    names_[0] = p.strings.find("memcpy_details");
    names_[1] = p.strings.find("memset_details");
    read_file_ = names_[0] != UINT32_MAX || names_[1] != UINT32_MAX;
  }
  of_line_ = memory_op_of_line_name(p.str(line.name));
  metadata_ = p.planes[line.plane].metadata_memory_ops;
}

MemoryOp LineMemoryOps::from_file(uint32_t e) const {
  std::optional<StatValue> found[2];
  p_.find_event_stats(plane_, e, names_, found);
  if (found[0]) return MemoryOp::kMemcpy;
  if (found[1]) return MemoryOp::kMemset;
  return MemoryOp::kNone;
}

MemoryOp event_memory_op_evidence(const Profile& p, uint32_t line, uint32_t e) {
  return LineMemoryOps(p, line)(e);
}

MemoryOp event_memory_op(const Profile& p, uint32_t line, uint32_t e, std::string_view opcode) {
  if (MemoryOp op = event_memory_op_evidence(p, line, e); op != MemoryOp::kNone) return op;
  if (!opcode.empty()) return memory_op_of_opcode(opcode);
  return memory_op_of_name(p.event_name(e));
}

}  // namespace jaxprof
