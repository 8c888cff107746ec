// What the importer reads from the file on demand besides decoding lines: an event's stats (all,
// or a few by name through the plane's stat ids), an event metadata's stats, and a line scanned
// without decoding it (its events of some metadata, in line order, with a few stats each).
//
// The scans run per event: helpers called only from here are defined `inline` (see
// xspace_importer.h).
#include <algorithm>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "jaxprof/common/error.h"
#include "jaxprof/formats/xplane/xspace_importer.h"
#include "jaxprof/wire/reader.h"

namespace jaxprof::xspace_import {

// The stats of the XEvent at `raw` in the plane bytes.
inline std::vector<Stat> XSpaceImporter::stats_at(const Profile& p, uint32_t plane,
                                                  uint64_t raw) const {
  const Plane& pl = p.planes[plane];
  const uint8_t* at = reinterpret_cast<const uint8_t*>(pl.bytes.data()) + raw;
  const uint8_t* end = reinterpret_cast<const uint8_t*>(pl.bytes.data() + pl.bytes.size());
  uint64_t len = wire::read_varint(at, end, origin_);
  std::vector<Stat> out;
  Reader r(std::string_view(reinterpret_cast<const char*>(at), len), origin_);
  Field f;
  while (r.next(f)) {
    if (f.number == xevent::kStats && f.type == WireType::kLen)
      out.push_back(decode_stat(f.bytes, pl.stat_names, p.strings, origin_));
  }
  return out;
}

// The stat metadata ids of `names` in the plane (-1: the plane has none); false when it has
// none of them.
inline bool XSpaceImporter::stat_ids(uint32_t plane, std::span<const StringId> names,
                                     int64_t* ids) const {
  const PlaneLookup& lookup = lookups_[plane - first_plane_];
  bool any = false;
  for (size_t i = 0; i < names.size(); ++i) {
    auto it = lookup.stat_id_of_name.find(names[i]);
    ids[i] = it == lookup.stat_id_of_name.end() ? -1 : it->second;
    any |= ids[i] >= 0;
  }
  return any;
}

// The value of the XStat [stat, end) into `out` (in place: this runs per event); `value` is
// where its fields after the metadata id begin.
inline void XSpaceImporter::read_stat_value(const Profile& p, const Plane& pl, const uint8_t* stat,
                                            const uint8_t* value, const uint8_t* end,
                                            StatValue& out) const {
  uint64_t bits;
  StatKind kind;
  if (plain_int_value(value, end, bits, kind)) {
    out.kind = kind;
    if (kind == StatKind::kUint64)
      out.u = bits;
    else
      out.i = static_cast<int64_t>(bits);
    return;
  }
  out = decode_stat(std::string_view(reinterpret_cast<const char*>(stat), end - stat),
                    pl.stat_names, p.strings, origin_, /*with_name=*/false)
            .value;
}

// Sets the unset out[i] to the value of the event's first own stat with stat id ids[i].
inline void XSpaceImporter::stats_by_id(const Profile& p, uint32_t plane, uint64_t raw,
                                        const int64_t* ids, size_t n,
                                        std::optional<StatValue>* out) const {
  const Plane& pl = p.planes[plane];
  const uint8_t* at = reinterpret_cast<const uint8_t*>(pl.bytes.data()) + raw;
  const uint8_t* end = reinterpret_cast<const uint8_t*>(pl.bytes.data() + pl.bytes.size());
  uint64_t len = wire::read_varint(at, end, origin_);
  if (len > static_cast<uint64_t>(end - at)) fail_at(at, "event is longer than its line");
  const uint8_t* const event_end = at + len;
  // Names still to find: the walk ends when none is left (only the first of each counts).
  size_t missing = 0;
  for (size_t i = 0; i < n; ++i) missing += ids[i] >= 0 && !out[i];
  // The event's fields are walked inline, as in decode_chunk: this runs for many events.
  while (at < event_end && missing > 0) {
    uint8_t tag = *at;
    if (tag != key(xevent::kStats, WireType::kLen)) {
      if (tag < 0x80 && (tag & 7) == static_cast<uint8_t>(WireType::kVarint)) {
        ++at;
        wire::read_varint(at, event_end, origin_);
      } else {
        at = skip_field(at, event_end);
      }
      continue;
    }
    ++at;
    uint64_t slen = wire::read_varint(at, event_end, origin_);
    if (slen > static_cast<uint64_t>(event_end - at)) fail_at(at, "stat is longer than its event");
    const uint8_t* q = at;
    at += slen;
    if (slen < 2 || *q != kStatIdKey) continue;
    ++q;
    int64_t id = static_cast<int64_t>(wire::read_varint(q, at, origin_));
    size_t first = n;  // the value is decoded once, whichever names want it
    for (size_t i = 0; i < n; ++i) {
      if (!PlaneLookup::is(id, ids[i]) || out[i]) continue;
      if (first == n) {
        first = i;
        read_stat_value(p, pl, at - slen, q, at, out[i].emplace());
      } else {
        out[i] = out[first];
      }
      --missing;
    }
  }
}

inline void XSpaceImporter::find_stats_at(const Profile& p, uint32_t plane, uint64_t raw,
                                          std::span<const StringId> names,
                                          std::span<std::optional<StatValue>> out) const {
  if (names.size() > kMaxNames) {
    for (const Stat& s : stats_at(p, plane, raw))
      for (size_t i = 0; i < names.size(); ++i)
        if (s.name == names[i] && !out[i]) out[i] = s.value;
    return;
  }
  int64_t ids[kMaxNames];
  if (stat_ids(plane, names, ids)) stats_by_id(p, plane, raw, ids, names.size(), out.data());
}

std::vector<Stat> XSpaceImporter::event_stats(const Profile& p, uint32_t plane, uint32_t e) const {
  return naming_file(*buf_, [&] { return stats_at(p, plane, p.events.raw_offset(e)); });
}

void XSpaceImporter::find_event_stats(const Profile& p, uint32_t plane, uint32_t e,
                                      std::span<const StringId> names,
                                      std::span<std::optional<StatValue>> out) const {
  naming_file(*buf_, [&] { find_stats_at(p, plane, p.events.raw_offset(e), names, out); });
}

void XSpaceImporter::find_scanned_event_stats(const Profile& p, uint32_t plane, uint64_t raw,
                                              std::span<const StringId> names,
                                              std::span<std::optional<StatValue>> out) const {
  naming_file(*buf_, [&] { find_stats_at(p, plane, raw, names, out); });
}

// find_stats_at with the ids resolved once.
class XSpaceImporter::IdStatReader final : public StatReader {
 public:
  IdStatReader(const XSpaceImporter& importer, const Profile& p, uint32_t plane,
               std::span<const StringId> names)
      : importer_(importer), p_(p), plane_(plane), n_(names.size()) {
    any_ = importer.stat_ids(plane, names, ids_);
  }
  void read(const ScannedEvent& e, std::span<std::optional<StatValue>> out) const override {
    for (auto& o : out) o.reset();
    if (!any_) return;
    uint64_t raw = e.event == ScannedEvent::kNotDecoded ? e.raw : p_.events.raw_offset(e.event);
    naming_file(*importer_.buf_,
                [&] { importer_.stats_by_id(p_, plane_, raw, ids_, n_, out.data()); });
  }

 private:
  const XSpaceImporter& importer_;
  const Profile& p_;
  uint32_t plane_;
  size_t n_;
  int64_t ids_[kMaxNames];
  bool any_ = false;
};

std::unique_ptr<StatReader> XSpaceImporter::stat_reader(const Profile& p, uint32_t plane,
                                                        std::span<const StringId> names) const {
  if (names.size() > kMaxNames) return EventSource::stat_reader(p, plane, names);
  return std::make_unique<IdStatReader>(*this, p, plane, names);
}

// The XStat [stat, end) into the first unset stats->out[i] whose id is its own (as stats_by_id).
// Returns how many it set.
inline size_t XSpaceImporter::read_own_stat(const Profile& p, uint32_t plane, const uint8_t* stat,
                                            const uint8_t* end, const OwnStats& stats) const {
  if (end - stat < 2 || *stat != kStatIdKey) return 0;
  const uint8_t* value = stat + 1;
  int64_t id = static_cast<int64_t>(wire::read_varint(value, end, origin_));
  size_t first = stats.n;  // the value is decoded once, whichever names want it
  size_t set = 0;
  for (size_t i = 0; i < stats.n; ++i) {
    if (!PlaneLookup::is(id, stats.ids[i]) || stats.out[i]) continue;
    if (first == stats.n) {
      first = i;
      read_stat_value(p, p.planes[plane], stat, value, end, stats.out[i].emplace());
    } else {
      stats.out[i] = stats.out[first];
    }
    ++set;
  }
  return set;
}

// Walks the line's events in file order as decode_chunk does, reading the metadata id of each
// and offset and duration only of those `want` accepts.
// Calls sink(ScannedEvent) for each event of the line marked in `want`, in file order.
template <typename Sink>
inline void XSpaceImporter::scan_chunks(const Profile& p, uint32_t li,
                                        std::span<const uint8_t> want, Sink&& sink,
                                        const OwnStats* stats) const {
  const int64_t shift_ps = host_shift_ps(p);
  // With release_counted, the bytes scanned go back to the kernel as they are passed (they fault
  // in again from the page cache if asked for again): the host threads scanned for a GPU's
  // launches are most of its profile.
  const bool releasing = opt_.release_pages && opt_.release_counted;
  BatchedRelease released(*buf_);
  for (uint32_t ci : line_chunks_[li - first_line_]) {
    const Chunk& c = chunks_[ci];
    const PlaneLookup& lookup = lookups_[c.plane - first_plane_];
    const uint8_t* pbase = reinterpret_cast<const uint8_t*>(p.planes[c.plane].bytes.data());
    const uint8_t* q = pbase + c.begin;
    const uint8_t* const line_end = pbase + c.end;
    uint32_t n = 0;
    while (n < c.count && q < line_end) {
      const uint8_t* field = q;
      if (*q != kEventKey) {
        Reader r(std::string_view(reinterpret_cast<const char*>(q), line_end - q), origin_);
        Field f;
        r.next(f);
        if (f.number == xline::kEvents) fail_at(field, "XLine.events with an unusual encoding");
        q = skip_field(field, line_end);
        continue;
      }
      ++q;
      const uint64_t raw = static_cast<uint64_t>(q - pbase);
      uint64_t len = wire::read_varint(q, line_end, origin_);
      if (len > static_cast<uint64_t>(line_end - q))
        fail_at(field, "event is longer than its line");
      const uint8_t* const event_end = q + len;
      ++n;
      const uint8_t* const event_begin = q;
      q = event_end;
      // Writers put the metadata id first, or after the offset: most events are passed over on
      // it alone.
      const uint8_t* r = event_begin;
      if (len > 0 && *r == key(xevent::kOffsetPs, WireType::kVarint))
        r = after_varint(r + 1, event_end);
      if (r < event_end && *r == key(xevent::kMetadataId, WireType::kVarint)) {
        ++r;
        int64_t id = static_cast<int64_t>(wire::read_varint(r, event_end, origin_));
        if (!want[lookup.metadata(id)]) continue;
      }
      uint64_t metadata_id = 0, offset_ps = 0, duration_ps = 0;
      // Stats still to find, and which of metadata id, offset and duration were read (bits 1,
      // 2, 4). Writers put fields in number order, the stats after those three: once the three
      // and every stat asked for are read, the rest of the event is other stats.
      size_t missing = stats ? stats->n : 0;
      unsigned scalars = 0;
      for (size_t i = 0; i < missing; ++i) stats->out[i].reset();
      for (const uint8_t* f = event_begin; f < event_end;) {
        uint8_t tag = *f;
        // Stats are most of an event's fields.
        if (tag == key(xevent::kStats, WireType::kLen)) {
          if (missing == 0 && scalars == 7) break;
          ++f;
          uint64_t slen = wire::read_varint(f, event_end, origin_);
          if (slen > static_cast<uint64_t>(event_end - f))
            fail_at(f, "stat is longer than its event");
          if (missing > 0) missing -= read_own_stat(p, c.plane, f, f + slen, *stats);
          f += slen;
        } else if (tag == key(xevent::kMetadataId, WireType::kVarint)) {
          ++f;
          uint64_t v = wire::read_varint(f, event_end, origin_);
          if (!(scalars & 1)) metadata_id = v;  // the first counts, as in decode_chunk
          scalars |= 1;
        } else if (tag == key(xevent::kOffsetPs, WireType::kVarint)) {
          ++f;
          uint64_t v = wire::read_long_varint(f, event_end, origin_);
          if (!(scalars & 2)) offset_ps = v;
          scalars |= 2;
        } else if (tag == key(xevent::kDurationPs, WireType::kVarint)) {
          ++f;
          uint64_t v = wire::read_long_varint(f, event_end, origin_);
          if (!(scalars & 4)) duration_ps = v;
          scalars |= 4;
        } else if (tag < 0x80 && (tag & 7) == static_cast<uint8_t>(WireType::kVarint)) {
          ++f;
          wire::read_varint(f, event_end, origin_);
        } else {
          f = skip_field(f, event_end);
        }
      }
      uint32_t mi = lookup.metadata(static_cast<int64_t>(metadata_id));
      if (!want[mi]) continue;
      sink(ScannedEvent{event_start(field, c.line_base_ps + shift_ps, offset_ps, duration_ps),
                        static_cast<int64_t>(duration_ps), mi, ScannedEvent::kNotDecoded, raw});
    }
    if (n != c.count) fail_at(q, "line ended before its events were read (corrupt file)");
    if (releasing) {
      const size_t at = static_cast<size_t>(pbase - origin_);
      released.add(at + c.begin, at + c.end);
    }
  }
}

template <typename Sink>
inline void XSpaceImporter::scan_with_file_name(const Profile& p, uint32_t li,
                                                std::span<const uint8_t> want, Sink&& sink,
                                                const OwnStats* stats) const {
  naming_file(*buf_, [&] { scan_chunks(p, li, want, sink, stats); });
}

inline bool XSpaceImporter::in_line_order(const ScannedEvent& a, const ScannedEvent& b) {
  if (a.start_ps != b.start_ps) return a.start_ps < b.start_ps;
  return a.duration_ps > b.duration_ps;
}

void XSpaceImporter::release_line_bytes(const Profile& p, uint32_t li) const {
  if (!opt_.release_pages) return;
  BatchedRelease released(*buf_);
  for (uint32_t ci : line_chunks_[li - first_line_]) {
    const Chunk& c = chunks_[ci];
    const auto at = static_cast<size_t>(
        reinterpret_cast<const uint8_t*>(p.planes[c.plane].bytes.data()) - origin_);
    released.add(at + c.begin, at + c.end);
  }
}

bool XSpaceImporter::scan_line(const Profile& p, uint32_t li, std::span<const uint8_t> want,
                               std::vector<ScannedEvent>& out) const {
  scan_with_file_name(p, li, want, [&](const ScannedEvent& e) { out.push_back(e); });
  // The order the decoded line would have (sort_lines): a stable sort of the whole line keeps
  // any subset of it in the order a stable sort of the subset gives.
  if (!std::is_sorted(out.begin(), out.end(), in_line_order))
    std::stable_sort(out.begin(), out.end(), in_line_order);
  return true;
}

bool XSpaceImporter::visit_line(const Profile& p, uint32_t li, std::span<const uint8_t> want,
                                std::span<const StringId> names, const LineVisitor& visit) const {
  std::optional<StatValue> own[kMaxNames];
  if (names.size() > kMaxNames) {  // rare: read each event's stats apart
    std::vector<std::optional<StatValue>> all(names.size());
    scan_with_file_name(p, li, want, [&](const ScannedEvent& e) {
      for (auto& o : all) o.reset();
      find_stats_at(p, p.lines[li].plane, e.raw, names, all);
      visit(e, all);
    });
    return true;
  }
  OwnStats stats{.n = names.size(), .out = own};
  if (!stat_ids(p.lines[li].plane, names, stats.ids)) stats.n = 0;
  std::span<const std::optional<StatValue>> values(own, names.size());
  scan_with_file_name(
      p, li, want, [&](const ScannedEvent& e) { visit(e, values); }, &stats);
  return true;
}

bool XSpaceImporter::plane_may_have_stat(const Profile& p, uint32_t plane,
                                         std::string_view name) const {
  // Every stat names itself by a stat metadata id of its plane.
  StringId id = p.strings.find(name);
  return id != UINT32_MAX && lookups_[plane - first_plane_].stat_id_of_name.count(id) > 0;
}

std::vector<Stat> XSpaceImporter::metadata_stats(const Profile& p, uint32_t metadata) const {
  const EventMetadata& m = p.event_metadata[metadata];
  std::vector<Stat> out;
  naming_file(*buf_, [&] {
    Reader r(m.bytes, origin_);
    Field f;
    while (r.next(f)) {
      if (f.number == xmeta::kStats && f.type == WireType::kLen)
        out.push_back(decode_stat(f.bytes, p.planes[m.plane].stat_names, p.strings, origin_));
    }
  });
  return out;
}

}  // namespace jaxprof::xspace_import
