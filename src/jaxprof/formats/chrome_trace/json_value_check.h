// Whether a piece of text is one well-formed JSON value (RFC 8259), by a scalar scan.
//
// The Chrome trace importer reads events with simdjson's On-Demand API, which skips the members
// it is not asked for by counting brackets and never checks their insides. A file broken there (a
// lost quote shifts every later string by one) would otherwise be read as if it were sound, and
// the events it swallows silently lost. Skipped members are small (an event's "cat", an arg the
// analyses do not use), so a scalar scan of each costs little.
#pragma once

#include <string_view>

namespace jaxprof {

// True when `text` is exactly one JSON value, with white space allowed around it.
bool is_json_value(std::string_view text);

}  // namespace jaxprof
