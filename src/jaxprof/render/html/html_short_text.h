// Short forms of long profile text for the report's table cells (the whole text stays on hover
// and in the row's detail): what tells rows apart is kept, the rest cut.
#pragma once

#include <string>
#include <string_view>

namespace jaxprof {

// The file name and line of a source location: "/opt/praxis/layers/attentions.py:1553" ->
// "attentions.py:1553".
std::string short_source(std::string_view source);

// A JAX op path in at most about `max_chars`: its first component, "…", and as many of its last
// components as fit (the op itself and its nearest scopes), each without its bracketed parameters:
// "pjit(step)/jit(main)/transpose(jvp(lm.apply))/lm/attention/dot_general[dimension_numbers=...]"
// -> "pjit(step)/…/lm/attention/dot_general". Names of merged instructions (';'-joined) show the
// first with "(+N)".
std::string short_op_path(std::string_view op_path, size_t max_chars = 44);

}  // namespace jaxprof
