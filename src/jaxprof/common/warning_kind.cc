#include "jaxprof/common/warning_kind.h"

#include <map>
#include <utility>

namespace jaxprof {

const WarningKind kNoHloForCollective{
    "no HLO for ", ": message size and bandwidth unknown", "collectives",
    "their message sizes and bandwidths are unknown; add the HLO with the program's *.hlo.pb "
    "files (XLA_FLAGS=--xla_dump_to=DIR --xla_dump_hlo_as_proto) as further paths"};

namespace {

const WarningKind* const kKinds[] = {&kNoHloForCollective};

// The kind and scope of `w`, when it is one of a kind.
bool classify(std::string_view w, const WarningKind*& kind, std::string_view& scope,
              std::string_view& subject) {
  for (const WarningKind* k : kKinds) {
    if (w.size() < k->lead.size() + k->tail.size() || !w.starts_with(k->lead) ||
        !w.ends_with(k->tail))
      continue;
    subject = w.substr(k->lead.size(), w.size() - k->lead.size() - k->tail.size());
    size_t slash = subject.find('/');
    if (slash == std::string_view::npos) continue;
    kind = k;
    scope = subject.substr(0, slash);
    return true;
  }
  return false;
}

}  // namespace

std::string WarningKind::text(std::string_view scope, std::string_view item) const {
  std::string out(lead);
  out.append(scope).append("/").append(item).append(tail);
  return out;
}

std::vector<std::string> summarise_warnings(std::span<const std::string> warnings) {
  struct Group {
    const WarningKind* kind;
    std::string_view scope, example;
    size_t count = 0;
  };
  std::vector<Group> groups;
  std::map<std::pair<const WarningKind*, std::string_view>, size_t> group_of;
  // Each warning: its group, or none (SIZE_MAX).
  std::vector<size_t> slot(warnings.size(), SIZE_MAX);
  for (size_t i = 0; i < warnings.size(); ++i) {
    const WarningKind* kind = nullptr;
    std::string_view scope, subject;
    if (!classify(warnings[i], kind, scope, subject)) continue;
    auto [it, added] = group_of.try_emplace({kind, scope}, groups.size());
    if (added) groups.push_back({kind, scope, subject});
    ++groups[it->second].count;
    slot[i] = it->second;
  }
  std::vector<std::string> out;
  std::vector<bool> printed(groups.size(), false);
  for (size_t i = 0; i < warnings.size(); ++i) {
    if (slot[i] == SIZE_MAX || groups[slot[i]].count == 1) {
      out.push_back(warnings[i]);
      continue;
    }
    if (printed[slot[i]]) continue;
    printed[slot[i]] = true;
    const Group& g = groups[slot[i]];
    out.push_back(std::string(g.kind->lead) + std::to_string(g.count) + " " +
                  std::string(g.kind->items) + " of " + std::string(g.scope) + ": " +
                  std::string(g.kind->meaning) + " (e.g. " + std::string(g.example) +
                  "; --verbose lists them all)");
  }
  return out;
}

}  // namespace jaxprof
