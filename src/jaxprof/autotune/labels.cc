#include "jaxprof/autotune/labels.h"

#include <re2/re2.h>

#include <map>
#include <tuple>

#include "jaxprof/common/error.h"

namespace jaxprof {

std::string AutotuneLabel::op_id() const {
  return complete() ? op + "@v" + std::to_string(version) : op;
}

std::vector<AutotuneLabel> extract_labels(std::string_view text, std::string_view prefix) {
  if (prefix.empty() || prefix.find('#') != std::string_view::npos)
    throw InputError(
        "", "label prefix must be non-empty and without '#': '" + std::string(prefix) + "'");
  // A prefix glued to a longer identifier ("xjaxprof_ops") is not a label: require a non-word
  // character (or the start) before it.
  RE2 re("(?:^|[^A-Za-z0-9_])(" + RE2::QuoteMeta(std::string(prefix)) +
         "#([A-Za-z0-9_-]+)(?:[@.]v([0-9]{1,18}):([A-Za-z0-9_.=+-]+))?)");
  std::vector<AutotuneLabel> out;
  std::map<std::tuple<std::string, int64_t, std::string>, size_t> seen;
  re2::StringPiece input(text.data(), text.size());
  std::string whole, op, version, key;
  while (RE2::FindAndConsume(&input, re, &whole, &op, &version, &key)) {
    int64_t v = version.empty() ? -1 : std::stoll(version);
    auto [it, fresh] = seen.try_emplace({op, v, key}, out.size());
    if (fresh) {
      AutotuneLabel l;
      l.label = whole;
      l.op = op;
      l.version = v;
      l.call_key = key;
      out.push_back(std::move(l));
    }
    ++out[it->second].occurrences;
    // The match consumed the character before the label; nothing to rewind since labels
    // cannot overlap.
  }
  return out;
}

}  // namespace jaxprof
