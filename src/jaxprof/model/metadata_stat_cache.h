// A few stats of event metadata entries, by interned name, decoded once per entry: for analyses
// that fill the gaps of many events' own stats from their metadata.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "jaxprof/model/profile.h"

namespace jaxprof {

template <size_t N>
class MetadataStatCache {
 public:
  using Values = std::array<std::optional<StatValue>, N>;

  MetadataStatCache(const Profile& profile, const std::array<StringId, N>& names)
      : profile_(profile), names_(names) {}

  // The entry's first stat of each name (unset where it has none).
  const Values& operator[](uint32_t metadata) {
    if (slot_.empty()) slot_.assign(profile_.event_metadata.size(), kUnset);
    uint32_t& slot = slot_[metadata];
    if (slot == kUnset) {
      slot = static_cast<uint32_t>(values_.size());
      Values& v = values_.emplace_back();
      for (const Stat& s : profile_.metadata_stats(metadata))
        for (size_t i = 0; i < N; ++i)
          if (s.name == names_[i] && !v[i]) v[i] = s.value;
    }
    return values_[slot];
  }

  // Sets the unset values of `out` from the entry's.
  void fill_gaps(uint32_t metadata, std::optional<StatValue>* out) {
    const Values& m = (*this)[metadata];
    for (size_t i = 0; i < N; ++i)
      if (!out[i]) out[i] = m[i];
  }

  const std::array<StringId, N>& names() const { return names_; }

 private:
  static constexpr uint32_t kUnset = UINT32_MAX;
  const Profile& profile_;
  std::array<StringId, N> names_;
  std::vector<uint32_t> slot_;  // metadata id -> index in values_, decoded on first use
  std::vector<Values> values_;
};

}  // namespace jaxprof
