// Rows that would read the same in a table (two programs named jit_dot, an op of the same name
// in each) get what tells them apart appended, and only those rows: names stay short otherwise.
#pragma once

#include <string>
#include <vector>

namespace jaxprof {

// For each i, labels[i], followed by " [" + tellers[i] + "]" when another row has the same label
// and tellers[i] is not empty.
std::vector<std::string> tell_apart(const std::vector<std::string>& labels,
                                    const std::vector<std::string>& tellers);

// "program 123", or "" for kNoProgram-like values the caller passes as "".
std::string program_teller(const std::string& program_id);

}  // namespace jaxprof
