// A profile loaded once per test binary run, for tests that read the same file many times.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <string>

#include "jaxprof/formats/load.h"

namespace jaxprof::testing {

// nullptr when the file does not exist (shared fixtures absent).
inline const LoadedProfile* cached_profile(const std::string& path) {
  static std::map<std::string, std::unique_ptr<LoadedProfile>> cache;
  auto it = cache.find(path);
  if (it != cache.end()) return it->second.get();
  if (!std::filesystem::exists(path)) return nullptr;
  auto lp = std::make_unique<LoadedProfile>();
  load_profile({path}, {}, *lp);
  return (cache[path] = std::move(lp)).get();
}

}  // namespace jaxprof::testing
