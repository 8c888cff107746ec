// Where tests find data: the project's own tests/data and the shared real profiles beside the
// project (read in place, never copied).
#pragma once

#include <string>

namespace jaxprof::testing {

inline std::string source_dir() {
#ifdef JAXPROF_SOURCE_DIR
  return JAXPROF_SOURCE_DIR;
#else
  return ".";
#endif
}
inline std::string fixture(const std::string& name) {
  return source_dir() + "/../shared/fixtures/" + name;
}
inline std::string test_data(const std::string& name) {
  return source_dir() + "/tests/data/" + name;
}

}  // namespace jaxprof::testing
