// Autotune labels: names stamped into a computation's op names (through jax.named_scope) that say
// which registered op a call is and with which call key, so a lowered or compiled computation can
// be tuned offline. Grammar (docs/autotune.md):
//   label   = PREFIX "#" OP [ ("@" | ".") "v" VERSION ":" KEY ]
//   OP      = [A-Za-z0-9_-]+      VERSION = [0-9]+      KEY = [A-Za-z0-9_.=+-]+
// PREFIX defaults to "jaxprof_ops" (ejkernel writes "ejkernel_ops"). XLA cuts op names at "@"
// when StableHLO becomes HLO, so "@v" labels are whole only in StableHLO text with debug
// locations; ".v" survives into HLO and compiled text. A cut label is still reported.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace jaxprof {

inline constexpr std::string_view kDefaultLabelPrefix = "jaxprof_ops";

struct AutotuneLabel {
  std::string label;  // as found
  std::string op;
  int64_t version = -1;  // -1 when the label was cut before its version
  std::string call_key;  // "" when cut
  uint64_t occurrences = 0;
  bool complete() const { return version >= 0; }
  std::string op_id() const;  // "op@vN", or "op" when cut
};

// Distinct labels (by op, version and key) in order of first appearance. `text` may be HLO or
// StableHLO text, or the bytes of a serialized HloProto/HloModuleProto (strings are stored
// verbatim). Throws InputError for a prefix that is empty or contains "#".
std::vector<AutotuneLabel> extract_labels(std::string_view text,
                                          std::string_view prefix = kDefaultLabelPrefix);

}  // namespace jaxprof
