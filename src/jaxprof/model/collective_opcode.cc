#include "jaxprof/model/collective_opcode.h"

namespace jaxprof {

std::string_view collective_base_opcode(std::string_view op) {
  for (std::string_view suffix : {"-start", "-done"})
    if (op.ends_with(suffix)) op.remove_suffix(suffix.size());
  static constexpr std::string_view kOps[] = {
      "all-reduce",        "all-gather",         "reduce-scatter",      "all-to-all",
      "ragged-all-to-all", "collective-permute", "collective-broadcast"};
  for (std::string_view k : kOps)
    if (op == k) return k;
  return {};
}

}  // namespace jaxprof
