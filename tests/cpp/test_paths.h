// Where tests find data: the project's own tests/data and the shared real profiles beside the
// project (read in place, never copied).
#pragma once

#include <cstdlib>
#include <string>

namespace jaxprof::testing {

inline std::string source_dir() {
#ifdef JAXPROF_SOURCE_DIR
  return JAXPROF_SOURCE_DIR;
#else
  return ".";
#endif
}
// JAXPROF_SHARED_FIXTURES points elsewhere, as for the Python tests (tests/python/ops_check.py).
inline std::string fixture(const std::string& name) {
  if (const char* dir = std::getenv("JAXPROF_SHARED_FIXTURES"))
    return std::string(dir) + "/" + name;
  return source_dir() + "/../shared/fixtures/" + name;
}
inline std::string test_data(const std::string& name) {
  return source_dir() + "/tests/data/" + name;
}

}  // namespace jaxprof::testing
