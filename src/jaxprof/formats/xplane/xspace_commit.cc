// A prepared XSpace file into the Profile: its planes (classified, with the lookups the decoder
// needs), their metadata and stats, its lines (segments of one line joined), the host's time base,
// and the event slots of every line chunk, laid out after those of the files already in.
//
// Helpers called only from this file are defined `inline` (see xspace_importer.h).
#include <algorithm>
#include <limits>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "jaxprof/common/error.h"
#include "jaxprof/formats/xplane/xspace_importer.h"
#include "jaxprof/model/time_range.h"
#include "jaxprof/wire/reader.h"

namespace jaxprof::xspace_import {

namespace {

// Reads the int64 key and message value of a map<int64, Message> entry.
void map_entry(std::string_view entry, const uint8_t* origin, int64_t& key,
               std::string_view& value) {
  Reader r(entry, origin);
  Field f;
  key = 0;
  value = {};
  while (r.next(f)) {
    if (f.number == 1 && f.type == WireType::kVarint) key = f.as_int64();
    if (f.number == 2 && f.type == WireType::kLen) value = f.bytes;
  }
}

// The HLO instruction name from TPU-style metadata names: "%fusion.3 = f32[...] fusion(...)".
std::string_view hlo_name_from_text(std::string_view name) {
  if (!name.starts_with('%')) return {};
  size_t eq = name.find(" = ");
  if (eq == std::string_view::npos) return {};
  return name.substr(1, eq - 1);
}

}  // namespace

// The plane's stat metadata: the names of its stat ids, and which ids the decoder reads.
inline void XSpaceImporter::add_stat_metadata(Plane& plane, PlaneLookup& lookup,
                                              const std::vector<std::string_view>& entries) {
  Field f;
  for (std::string_view entry : entries) {
    int64_t key;
    std::string_view value;
    map_entry(entry, origin_, key, value);
    // Writers number stats from 1; a negative id is left out (its stats have no name), so that
    // the readers that look stats up by id (PlaneLookup::is) and by name agree.
    if (key < 0) continue;
    // Stats refer to the map key (the entry's own id field repeats it).
    std::string_view name;
    Reader mr(value, origin_);
    while (mr.next(f)) {
      if (f.number == 2 && f.type == WireType::kLen) name = f.bytes;
    }
    StringId sid = p_->strings.intern_view(name);
    plane.stat_names[key] = sid;
    lookup.stat_id_of_name.try_emplace(sid, key);
    if (name == "hlo_op" && lookup.hlo_op_stat < 0) lookup.hlo_op_stat = key;
    if (name == "hlo_module" && lookup.hlo_module_stat < 0) lookup.hlo_module_stat = key;
    if (name == "program_id" && lookup.program_id_stat < 0) lookup.program_id_stat = key;
    if (name == "correlation_id" && lookup.correlation_stat < 0) lookup.correlation_stat = key;
    if (name == "group_id" && lookup.group_stat < 0) lookup.group_stat = key;
    if (name == "device_offset_ps" && lookup.device_offset_stat < 0)
      lookup.device_offset_stat = key;
    if (name == "device_duration_ps" && lookup.device_duration_stat < 0)
      lookup.device_duration_stat = key;
    if (name == "memcpy_details" && lookup.memcpy_stat < 0) lookup.memcpy_stat = key;
    if (name == "memset_details" && lookup.memset_stat < 0) lookup.memset_stat = key;
  }
  // Device planes whose events may carry the ids (GPU ones; TPU planes declare neither).
  lookup.kernel_ids =
      is_device_plane(plane.kind) && (lookup.correlation_stat >= 0 || lookup.group_stat >= 0);
  lookup.device_clock = is_device_plane(plane.kind) && lookup.device_offset_stat >= 0 &&
                        lookup.device_duration_stat >= 0;
  lookup.memory_ops =
      is_device_plane(plane.kind) && (lookup.memcpy_stat >= 0 || lookup.memset_stat >= 0);
  for (auto [id, name] : plane.stat_names) {
    if (id < 0 || static_cast<uint64_t>(id) >= 4 * plane.stat_names.size() + 1024) continue;
    if (lookup.dense_stat_names.size() <= static_cast<uint64_t>(id))
      lookup.dense_stat_names.resize(id + 1, 0);
    lookup.dense_stat_names[id] = name;
  }
}

// The plane's event metadata: names, HLO op, module and program id, into Profile::event_metadata,
// and the lookup from the plane's metadata ids to them.
inline void XSpaceImporter::add_event_metadata(uint32_t plane_index, PlaneLookup& lookup,
                                               const std::vector<std::string_view>& entries) {
  Plane& plane = p_->planes[plane_index];
  Field f;
  int64_t max_id = -1;
  std::vector<std::pair<int64_t, uint32_t>> ids;
  ids.reserve(entries.size());
  for (std::string_view entry : entries) {
    int64_t key;
    std::string_view value;
    map_entry(entry, origin_, key, value);
    uint32_t index = static_cast<uint32_t>(p_->event_metadata.size());
    EventMetadata& m = p_->event_metadata.emplace_back();
    m.plane = plane_index;
    m.id = key;
    m.bytes = value;
    Reader mr(value, origin_);
    while (mr.next(f)) {
      if (f.type != WireType::kLen) continue;
      if (f.number == xmeta::kName) m.name = p_->strings.intern_view(f.bytes);
      if (f.number == xmeta::kDisplayName) m.display_name = p_->strings.intern_view(f.bytes);
      if (f.number == xmeta::kStats) {
        Stat s = decode_stat(f.bytes, plane.stat_names, p_->strings, origin_);
        std::string_view sname = p_->strings[s.name];
        if (sname == "hlo_op" && s.value.is_text()) m.hlo_op = p_->strings.intern_view(s.value.str);
        if (sname == "hlo_module" && s.value.is_text())
          m.hlo_module = p_->strings.intern_view(s.value.str);
        if (sname == "program_id" && s.value.as_int())
          m.program_id = static_cast<ProgramId>(*s.value.as_int());
        if (sname == "memcpy_details") m.memory_op |= Events::kMemcpyStat;
        if (sname == "memset_details") m.memory_op |= Events::kMemsetStat;
        plane.metadata_memory_ops |= m.memory_op != 0;
      }
    }
    if (m.hlo_op == 0) {
      std::string_view from_text = hlo_name_from_text(p_->strings[m.name]);
      if (!from_text.empty()) m.hlo_op = p_->strings.intern_view(from_text);
    }
    ids.emplace_back(key, index);
    max_id = std::max(max_id, key);
  }
  // Metadata ids are normally dense small integers: a vector beats a hash map per event.
  bool dense = max_id >= 0 && static_cast<uint64_t>(max_id) < 4 * ids.size() + 1024;
  if (dense) lookup.dense_metadata.assign(max_id + 1, 0);
  for (auto [key, index] : ids) {
    if (dense && key >= 0)
      lookup.dense_metadata[key] = index;
    else
      lookup.sparse_metadata[key] = index;
  }
}

// Adds one plane of the file: its own fields and kind, then its stat and event metadata.
inline void XSpaceImporter::scan_plane(std::string_view bytes) {
  uint32_t plane_index = static_cast<uint32_t>(p_->planes.size());
  Plane& plane = p_->planes.emplace_back();
  plane.host = host_index_;
  plane.buffer = buffer_index_;
  plane.source = source_index_;
  plane.bytes = bytes;

  std::vector<std::string_view> event_meta, stat_meta, stats;
  Reader r(bytes, origin_);
  Field f;
  while (r.next(f)) {
    switch (f.number) {
      case xplane::kId:
        plane.id = f.as_int64();
        break;
      case xplane::kName:
        wire::expect_type(r, f, WireType::kLen, "XPlane.name");
        plane.name = p_->strings.intern_view(f.bytes);
        break;
      case xplane::kEventMetadata:
        wire::expect_type(r, f, WireType::kLen, "XPlane.event_metadata");
        event_meta.push_back(f.bytes);
        break;
      case xplane::kStatMetadata:
        wire::expect_type(r, f, WireType::kLen, "XPlane.stat_metadata");
        stat_meta.push_back(f.bytes);
        break;
      case xplane::kStats:
        wire::expect_type(r, f, WireType::kLen, "XPlane.stats");
        stats.push_back(f.bytes);
        break;
      default:
        break;
    }
  }
  plane.kind = classify_plane(p_->strings[plane.name]);
  // Events keep their offset in 32 bits unless some plane needs more (a host plane of 4.7 GB in
  // a 5.3 GB capture of Python threads).
  if (plane.bytes.size() > std::numeric_limits<uint32_t>::max()) p_->events.make_wide();

  PlaneLookup& lookup = lookups_.emplace_back();
  // Stat metadata first: event metadata stats and refs need the names.
  add_stat_metadata(plane, lookup, stat_meta);
  for (std::string_view s : stats)
    plane.stats.push_back(decode_stat(s, plane.stat_names, p_->strings, origin_));
  add_event_metadata(plane_index, lookup, event_meta);
}

inline void XSpaceImporter::register_line(uint32_t plane_index, CountedLine counted,
                                          std::unordered_map<int64_t, uint32_t>& line_by_id) {
  PendingLine& pending = counted.pending;
  auto [it, inserted] = line_by_id.try_emplace(counted.id, static_cast<uint32_t>(p_->lines.size()));
  if (inserted) {
    Line& line = p_->lines.emplace_back();
    line.plane = plane_index;
    line.id = counted.id;
    line.name = p_->strings.intern_view(counted.name);
    line.display_name = p_->strings.intern_view(counted.display_name);
    line.timestamp_ns = pending.timestamp_ns;
    line.metadata_bits = std::move(pending.metadata_bits);
    p_->planes[plane_index].lines.push_back(it->second);
  } else {
    Line& line = p_->lines[it->second];
    // Segments of one line: the union of what they hold; unknown if any is.
    if (pending.metadata_bits.empty() || line.metadata_bits.empty())
      line.metadata_bits.clear();
    else
      for (size_t w = 0; w < line.metadata_bits.size(); ++w)
        line.metadata_bits[w] |= pending.metadata_bits[w];
    if (line.name == 0) line.name = p_->strings.intern_view(counted.name);
    if (line.display_name == 0) line.display_name = p_->strings.intern_view(counted.display_name);
    if (pending.events > 0) line.timestamp_ns = std::min(line.timestamp_ns, pending.timestamp_ns);
  }
  pending.line = it->second;
  pending_.push_back(std::move(pending));
}

// Registers the lines prepare() counted, in file order.
inline void XSpaceImporter::register_lines() {
  std::unordered_map<int64_t, uint32_t> line_by_id;
  uint32_t plane = UINT32_MAX;
  for (size_t i = 0; i < raw_lines_.size(); ++i) {
    if (raw_lines_[i].plane != plane) {
      line_by_id.clear();
      plane = raw_lines_[i].plane;
    }
    register_line(first_plane_ + plane, std::move(counted_[i]), line_by_id);
  }
}

inline void XSpaceImporter::layout_events(int64_t host_base) {
  // Events of a line are contiguous, lines in the order they were first seen.
  uint64_t first = p_->events.size();
  std::vector<uint64_t> line_count(p_->lines.size(), 0);
  for (const PendingLine& l : pending_) line_count[l.line] += l.events;
  uint32_t first_line = pending_.empty() ? 0 : pending_.front().line;
  std::vector<uint64_t> line_first(p_->lines.size(), 0);
  uint64_t total = first;
  for (uint32_t li = first_line; li < p_->lines.size(); ++li) {
    line_first[li] = total;
    total += line_count[li];
  }
  if (total >= std::numeric_limits<uint32_t>::max())
    throw InputError("", "profile has more than 4 billion events; not supported", 0);
  for (uint32_t li = first_line; li < p_->lines.size(); ++li) {
    p_->lines[li].first_event = static_cast<uint32_t>(line_first[li]);
    p_->lines[li].event_count = static_cast<uint32_t>(line_count[li]);
  }
  p_->events.resize(total, /*uninitialised=*/true);

  std::vector<uint64_t> cursor = line_first;
  line_chunks_.assign(p_->lines.size() - first_line_, {});
  for (const PendingLine& l : pending_) {
    uint32_t plane = p_->lines[l.line].plane;
    int64_t base_ps = 0;
    if (!l.chunk_starts.empty() && !ps_since(l.timestamp_ns, host_base, base_ps))
      throw InputError("", "out of range: line '" + std::string(p_->str(p_->lines[l.line].name)) +
                               "' has timestamp_ns " + std::to_string(l.timestamp_ns) +
                               ", more than " + kMaxTimeText + " after the file's earliest line (" +
                               std::to_string(host_base) + ")");
    for (size_t c = 0; c < l.chunk_starts.size(); ++c) {
      uint32_t begin_index = l.chunk_starts[c].second;
      uint32_t end_index = c + 1 < l.chunk_starts.size() ? l.chunk_starts[c + 1].second : l.events;
      line_chunks_[l.line - first_line_].push_back(static_cast<uint32_t>(chunks_.size()));
      chunks_.push_back(Chunk{plane, l.chunk_starts[c].first, l.end, end_index - begin_index,
                              static_cast<uint32_t>(cursor[l.line] + begin_index), base_ps,
                              line_device_clock(l.line)});
    }
    cursor[l.line] += l.events;
  }
}

void XSpaceImporter::commit(Profile& p, const std::string& host) {
  p_ = &p;
  Profile::FileSlots slots = p_->add_file(host, buf_);
  host_index_ = slots.host;
  buffer_index_ = slots.buffer;
  source_index_ = slots.source;
  first_plane_ = static_cast<uint32_t>(p_->planes.size());
  first_line_ = static_cast<uint32_t>(p_->lines.size());
  p_->errors.insert(p_->errors.end(), errors_.begin(), errors_.end());
  p_->warnings.insert(p_->warnings.end(), warnings_.begin(), warnings_.end());
  p_->hosts[host_index_].captured_on = hostnames_;

  for (std::string_view plane : planes_) scan_plane(plane);
  register_lines();

  int64_t host_base = std::numeric_limits<int64_t>::max();
  for (const PendingLine& l : pending_)
    if (l.events > 0) host_base = std::min(host_base, l.timestamp_ns);
  if (host_base == std::numeric_limits<int64_t>::max()) host_base = 0;
  p_->hosts[host_index_].base_ns = host_base;

  host_base_ns_ = host_base;
  layout_events(host_base);
  for (uint32_t li = first_line_; li < p_->lines.size(); ++li) {
    Line& line = p_->lines[li];
    line.source = source_index_;
    line.decoded = line.event_count == 0;
  }
  pending_.clear();
  raw_lines_.clear();
  counted_.clear();
  planes_.clear();
  p_ = nullptr;
}

// Where this file's time zero lies on the profile's common clock (checked by finish_import).
int64_t XSpaceImporter::host_shift_ps(const Profile& p) const {
  int64_t ps = 0;
  if (!ps_since(host_base_ns_, p.base_ns, ps))
    throw InputError(buf_->path(), "its clock is too far from the other files' to be one timeline");
  return ps;
}

}  // namespace jaxprof::xspace_import
