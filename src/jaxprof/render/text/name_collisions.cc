#include "jaxprof/render/text/name_collisions.h"

#include <unordered_map>

namespace jaxprof {

std::vector<std::string> tell_apart(const std::vector<std::string>& labels,
                                    const std::vector<std::string>& tellers) {
  std::unordered_map<std::string, int> seen;
  for (const std::string& l : labels) ++seen[l];
  std::vector<std::string> out = labels;
  for (size_t i = 0; i < out.size(); ++i)
    if (seen[labels[i]] > 1 && i < tellers.size() && !tellers[i].empty())
      out[i] += " [" + tellers[i] + "]";
  return out;
}

std::string program_teller(const std::string& program_id) {
  return program_id.empty() ? std::string() : "program " + program_id;
}

}  // namespace jaxprof
