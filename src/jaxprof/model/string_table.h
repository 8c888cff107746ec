// Interned strings. Id 0 is the empty string. Views stay valid as long as the table and the
// buffers the strings point into live; strings that need storage are copied into the table.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace jaxprof {

using StringId = uint32_t;

class StringTable {
 public:
  StringTable() { strings_.push_back({}); }

  // `s` must outlive the table (a view into a Buffer the Profile owns).
  StringId intern_view(std::string_view s) {
    if (s.empty()) return 0;
    auto [it, inserted] = index_.try_emplace(s, static_cast<StringId>(strings_.size()));
    if (inserted) strings_.push_back(s);
    return it->second;
  }
  // Copies `s` into the table when it is new.
  StringId intern_copy(std::string_view s) {
    if (s.empty()) return 0;
    auto it = index_.find(s);
    if (it != index_.end()) return it->second;
    const std::string& stored = owned_.emplace_back(s);
    return intern_view(stored);
  }
  std::string_view operator[](StringId id) const { return strings_[id]; }
  size_t size() const { return strings_.size(); }
  // Returns the id of s if interned, else nullopt-like sentinel UINT32_MAX.
  StringId find(std::string_view s) const {
    if (s.empty()) return 0;
    auto it = index_.find(s);
    return it == index_.end() ? UINT32_MAX : it->second;
  }

 private:
  std::vector<std::string_view> strings_;
  std::unordered_map<std::string_view, StringId> index_;
  std::deque<std::string> owned_;  // deque: stable addresses
};

}  // namespace jaxprof
