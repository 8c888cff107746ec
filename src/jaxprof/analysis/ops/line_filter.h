// Which lines may hold events of given event-metadata entries, from the metadata ids importers
// note per line while counting (Line::metadata_bits), so that an analysis looking for a few
// kinds of event decodes only the lines that can have them. Never says "no" wrongly: a line
// without the note, or whose ids collide with a wanted one, "may hold".
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "jaxprof/model/profile.h"

namespace jaxprof {

class LineFilter {
 public:
  explicit LineFilter(const Profile& p) : p_(p) {}

  void want(uint32_t metadata) {
    const EventMetadata& m = p_.event_metadata[metadata];
    std::vector<uint64_t>& mask = masks_[m.plane];
    if (mask.empty()) mask.assign(kLineMetadataBits / 64, 0);
    uint64_t id = static_cast<uint64_t>(m.id) % kLineMetadataBits;
    mask[id / 64] |= uint64_t{1} << (id % 64);
  }

  bool may_hold(uint32_t line) const {
    const Line& l = p_.lines[line];
    auto it = masks_.find(l.plane);
    if (it == masks_.end()) return false;
    if (l.metadata_bits.empty()) return true;
    for (size_t w = 0; w < it->second.size(); ++w)
      if (l.metadata_bits[w] & it->second[w]) return true;
    return false;
  }

 private:
  const Profile& p_;
  std::unordered_map<uint32_t, std::vector<uint64_t>> masks_;  // plane -> wanted id bits
};

}  // namespace jaxprof
