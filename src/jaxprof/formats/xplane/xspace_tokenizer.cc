// The first pass over an XSpace: bytes to records. Reads only tags and lengths: where the
// planes are, the XSpace's own errors, warnings and host names, and each line's header, event
// count, metadata ids met and where every kChunkEvents-th event starts (lines on several threads).
// Nothing here touches a Profile: several files can be read at once.
//
// Helpers called only from this file are defined `inline` (see xspace_importer.h).
#include <algorithm>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "jaxprof/common/error.h"
#include "jaxprof/formats/xplane/xspace_importer.h"
#include "jaxprof/formats/xplane/xspace_parallel.h"
#include "jaxprof/wire/reader.h"

namespace jaxprof::xspace_import {

// A file cut off while it was written ends inside one of the XSpace's own fields (a plane,
// mostly): when the field at `offset` runs past the end with a length a plane can have (damaged
// bytes give lengths of terabytes), says so.
inline void XSpaceImporter::throw_if_cut_short(int64_t offset) const {
  std::string_view v = buf_->view();
  uint64_t end = wire::end_past_message(v, static_cast<uint64_t>(offset));
  if (end == 0 || end - static_cast<uint64_t>(offset) > std::numeric_limits<uint32_t>::max())
    return;
  bool plane = static_cast<uint8_t>(v[offset]) == key(xspace::kPlanes, WireType::kLen);
  std::string what = plane ? "plane " + std::to_string(planes_.size() + 1) : "its last field";
  what += end == v.size() + 1
              ? " is cut short"
              : " needs " + std::to_string(end - v.size()) + " bytes more than there are";
  throw truncated_input(buf_->path(), what, offset, v.size(), buf_->compressed());
}

inline void XSpaceImporter::check_format() {
  std::string_view v = buf_->view();
  size_t i = 0;
  while (i < v.size() && (v[i] == ' ' || v[i] == '\n' || v[i] == '\r' || v[i] == '\t')) ++i;
  if (i < v.size() && (v[i] == '{' || v[i] == '['))
    throw InputError(
        "", "looks like JSON (a Chrome trace?), expected a binary XSpace (*.xplane.pb)", 0);
  if (v.starts_with("PK\x03\x04"))
    throw InputError("", "is a zip archive, expected a binary XSpace (*.xplane.pb)", 0);
  // An XSpace starts with a plane (field 1, length-delimited) or, rarely, another XSpace field.
  uint8_t first = static_cast<uint8_t>(v[0]);
  if (first != 0x0a && first != 0x12 && first != 0x1a && first != 0x22)
    throw InputError("",
                     "not an XSpace profile: unexpected first byte 0x" +
                         std::string(1, "0123456789abcdef"[first >> 4]) +
                         std::string(1, "0123456789abcdef"[first & 15]),
                     0);
}

// The metadata id of an event whose first field is not its metadata id (some writers put the
// offset first), like the fast path in count_line the first one met; 0, proto3's default, when
// it has none. Varint and length-delimited fields are stepped over inline: this runs per event.
inline void XSpaceImporter::note_metadata_id(const uint8_t* p, const uint8_t* end,
                                             std::vector<uint64_t>& bits) const {
  uint64_t id = 0;
  if (p < end && *p == key(xevent::kMetadataId, WireType::kVarint)) {
    ++p;
    id = wire::read_varint(p, end, origin_) % kLineMetadataBits;
    bits[id / 64] |= uint64_t{1} << (id % 64);
    return;
  }
  while (p < end) {
    uint8_t tag = *p;
    if (tag == key(xevent::kMetadataId, WireType::kVarint)) {
      ++p;
      id = wire::read_varint(p, end, origin_);
      break;
    }
    if (tag < 0x80 && (tag & 7) == static_cast<uint8_t>(WireType::kVarint)) {
      ++p;
      while (p < end && (*p & 0x80)) ++p;
      ++p;
    } else if (tag < 0x80 && (tag & 7) == static_cast<uint8_t>(WireType::kLen)) {
      ++p;
      uint64_t len = wire::read_varint(p, end, origin_);
      if (len > static_cast<uint64_t>(end - p)) fail_at(p, "event field is longer than its event");
      p += len;
    } else {
      p = skip_field(p, end);
    }
  }
  id %= kLineMetadataBits;
  bits[id / 64] |= uint64_t{1} << (id % 64);
}

// Reads one XLine's header fields and counts its events, remembering where every
// kChunkEvents-th event starts. Touches no shared state: lines are counted in parallel.
inline XSpaceImporter::CountedLine XSpaceImporter::count_line(std::string_view plane_bytes,
                                                              std::string_view bytes) const {
  CountedLine out;
  PendingLine& pending = out.pending;
  const uint8_t* const pbase = reinterpret_cast<const uint8_t*>(plane_bytes.data());
  const uint8_t* p = reinterpret_cast<const uint8_t*>(bytes.data());
  const uint8_t* const end = p + bytes.size();
  uint32_t events = 0;
  // Metadata ids met, read while the event's first bytes are in cache anyway (writers mostly
  // put field 1 first; other events are walked field by field).
  std::vector<uint64_t>& bits = pending.metadata_bits;
  bits.assign(kLineMetadataBits / 64, 0);
  while (p < end) {
    // Runs of events are the bulk: count them with a tight loop.
    while (p < end && *p == kEventKey) {
      if (events % kChunkEvents == 0)
        pending.chunk_starts.emplace_back(static_cast<uint64_t>(p - pbase), events);
      const uint8_t* field = p++;
      uint64_t len = wire::read_varint(p, end, origin_);
      if (len > static_cast<uint64_t>(end - p))
        wire::fail(origin_, field, "event is longer than its line");
      if (len > 0 && *p == key(xevent::kMetadataId, WireType::kVarint)) {
        const uint8_t* q = p + 1;
        uint64_t id = wire::read_varint(q, p + len, origin_) % kLineMetadataBits;
        bits[id / 64] |= uint64_t{1} << (id % 64);
      } else if (len > 0 && *p == key(xevent::kOffsetPs, WireType::kVarint)) {
        // Offset first, then (usually) the metadata id.
        const uint8_t* const e = p + len;
        const uint8_t* q = after_varint(p + 1, e);
        if (e - q >= 2 && q[0] == key(xevent::kMetadataId, WireType::kVarint) && q[1] < 0x80)
          bits[q[1] / 64] |= uint64_t{1} << (q[1] % 64);  // a one-byte id: the common case
        else
          note_metadata_id(q, e, bits);
      } else {
        note_metadata_id(p, p + len, bits);
      }
      p += len;
      if (++events == std::numeric_limits<uint32_t>::max())
        wire::fail(origin_, field, "line has too many events");
    }
    if (p >= end) break;
    Reader r(std::string_view(reinterpret_cast<const char*>(p), end - p), origin_);
    Field f;
    r.next(f);
    switch (f.number) {
      case xline::kId:
        out.id = f.as_int64();
        break;
      case xline::kName:
        if (f.type == WireType::kLen) out.name = f.bytes;
        break;
      case xline::kDisplayName:
        if (f.type == WireType::kLen) out.display_name = f.bytes;
        break;
      case xline::kTimestampNs:
        pending.timestamp_ns = f.as_int64();
        break;
      case xline::kEvents:
        wire::expect_type(r, f, WireType::kLen, "XLine.events");
        wire::fail(origin_, p, "XLine.events with an unusual encoding");
      default:
        break;
    }
    p = skip_field(p, end);
  }
  pending.events = events;
  pending.end = static_cast<uint64_t>(end - pbase);
  return out;
}

void XSpaceImporter::prepare(unsigned threads) {
  check_format();
  Reader r(buf_->view(), origin_);
  Field f;
  try {
    while (r.next(f)) {
      switch (f.number) {
        case xspace::kPlanes:
          wire::expect_type(r, f, WireType::kLen, "XSpace.planes");
          planes_.push_back(f.bytes);
          break;
        case xspace::kErrors:
          if (f.type == WireType::kLen)
            errors_.push_back(buf_->path() + ": " + std::string(f.bytes));
          break;
        case xspace::kWarnings:
          if (f.type == WireType::kLen)
            warnings_.push_back(buf_->path() + ": " + std::string(f.bytes));
          break;
        case xspace::kHostnames:
          if (f.type == WireType::kLen) hostnames_.emplace_back(f.bytes);
          break;
        default:
          break;
      }
    }
  } catch (const InputError&) {
    throw_if_cut_short(r.field_offset());
    throw;
  }
  if (planes_.empty())
    throw InputError("", "no XPlanes found: not an XSpace profile (expected *.xplane.pb)", 0);
  for (uint32_t i = 0; i < planes_.size(); ++i) {
    Reader pr(planes_[i], origin_);
    while (pr.next(f)) {
      if (f.number != xplane::kLines) continue;
      wire::expect_type(pr, f, WireType::kLen, "XPlane.lines");
      raw_lines_.push_back(RawLine{i, f.bytes});
    }
  }
  count_threads_ = threads;
  counted_.resize(raw_lines_.size());
  parallel_for(thread_count(raw_lines_.size()), raw_lines_.size(), [&](size_t i) {
    const RawLine& l = raw_lines_[i];
    counted_[i] = count_line(planes_[l.plane], l.bytes);
  });
  count_threads_ = 0;
  for (const CountedLine& c : counted_) events_ += c.pending.events;
  if (opt_.release_pages && opt_.release_counted) buf_->release(0, buf_->size());
}

}  // namespace jaxprof::xspace_import
