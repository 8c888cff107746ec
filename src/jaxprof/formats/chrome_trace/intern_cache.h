// A direct-mapped cache in front of StringTable::intern_copy, shared by the Chrome trace import's
// stages (arg keys as they are read, event names as they are parsed).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

#include "jaxprof/model/string_table.h"

namespace jaxprof::chrome_trace {

// Trace events repeat a few hundred names and keys millions of times, and most lookups then cost
// one short memcmp.
class InternCache {
 public:
  StringId intern(StringTable& table, std::string_view s) {
    if (s.empty()) return 0;
    uint64_t h = s.size() * 0x9E3779B97F4A7C15ull;
    size_t n = std::min<size_t>(s.size(), 16);
    for (size_t i = 0; i < n; ++i) h = (h ^ static_cast<uint8_t>(s[i])) * 0x100000001B3ull;
    h ^= static_cast<uint8_t>(s.back());
    Slot& slot = slots_[(h >> 20) % kSlots];
    if (slot.text.size() == s.size() && std::memcmp(slot.text.data(), s.data(), s.size()) == 0)
      return slot.id;
    slot.id = table.intern_copy(s);
    slot.text = table[slot.id];
    return slot.id;
  }

 private:
  static constexpr size_t kSlots = 4096;
  struct Slot {
    std::string_view text;
    StringId id = 0;
  };
  std::vector<Slot> slots_ = std::vector<Slot>(kSlots);
};

}  // namespace jaxprof::chrome_trace
