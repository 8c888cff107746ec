// Warnings stay text everywhere (JSON `warnings`, partial files, Python). A producer that can
// give many warnings of one kind (one per collective, per op, ...) builds each with its
// WarningKind, so the command line can print one line per kind and scope: how many, one example,
// and what they mean. Warnings of no kind print as they are.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace jaxprof {

struct WarningKind {
  std::string_view lead;   // every warning of the kind starts with it: "no HLO for "
  std::string_view tail;   // and ends with it: ": message size and bandwidth unknown"
  std::string_view items;  // what the subjects are, plural: "collectives"
  std::string_view meaning;  // the grouped line's ending: "their message sizes ... unknown; ..."
  // lead + scope "/" item + tail (the scope, a module, groups the line; it holds no '/').
  std::string text(std::string_view scope, std::string_view item) const;
};

// A collective without HLO (analysis/collectives).
extern const WarningKind kNoHloForCollective;

// The lines stderr shows for `warnings`: a kind's warnings of one scope, when there are two or
// more, become one line ("no HLO for 128 collectives of jit_step_fun: ...; e.g. ..."), at the
// place of the first; every other warning is its own line. The order is otherwise kept.
std::vector<std::string> summarise_warnings(std::span<const std::string> warnings);

}  // namespace jaxprof
