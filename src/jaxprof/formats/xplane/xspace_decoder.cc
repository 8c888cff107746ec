// Decoding on demand: the events of the requested lines, chunk by chunk on several threads, from
// the file into their slots of the event columns (times, metadata, HLO op and module, and the
// device stats a plane declares), then strings and modules interned by each worker merged into
// the profile's tables and each line put in time order.
//
// The decoder loops are the hot path: helpers called only from here are defined `inline` (see
// xspace_importer.h).
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "jaxprof/common/error.h"
#include "jaxprof/formats/line_order.h"
#include "jaxprof/formats/xplane/xspace_importer.h"
#include "jaxprof/formats/xplane/xspace_parallel.h"
#include "jaxprof/model/time_range.h"
#include "jaxprof/wire/reader.h"

namespace jaxprof::xspace_import {

// The value of an XStat [value, end) (after its metadata id) into `out` as an Events id column
// holds it, unless an earlier stat of the event set it (its first counts): a varint int64 or
// uint64 value, else kStatInFile.
inline void XSpaceImporter::own_int_stat(const uint8_t* value, const uint8_t* end,
                                         int64_t& out) const {
  if (out != Events::kNoStat) return;
  out = Events::kStatInFile;
  uint64_t bits;
  StatKind kind;
  if (!plain_int_value(value, end, bits, kind)) return;
  int64_t v = static_cast<int64_t>(bits);  // as StatValue::as_int gives either kind
  if (v != Events::kNoStat && v != Events::kStatInFile) out = v;
}

// An event's hlo_op, hlo_module or program_id stat into the one it is; strings are interned in
// the worker's tables. `seen` has bit `which` set once the event's first stat of that name was
// read: only the first counts, as for every other reader of stats (stats_by_id, read_own_stat).
inline void XSpaceImporter::decode_hot_stat(std::string_view bytes, const PlaneLookup& lookup,
                                            WorkerTables& w, StringId& hlo_op, StringId& hlo_module,
                                            ProgramId& program_id, unsigned& seen) {
  Reader sr(bytes, origin_);
  Field g;
  if (!sr.next(g) || g.number != 1) return;  // metadata_id comes first in serialized stats
  int64_t id = g.as_int64();
  int which = lookup.is(id, lookup.hlo_op_stat)       ? 0
              : lookup.is(id, lookup.hlo_module_stat) ? 1
              : lookup.is(id, lookup.program_id_stat) ? 2
                                                      : -1;
  if (which < 0 || (seen & (1u << which))) return;
  seen |= 1u << which;
  while (sr.next(g)) {
    StringId sid = 0;
    uint64_t number = 0;
    bool is_text = false;
    switch (g.number) {
      case 3:
      case 4:
        number = g.value;
        break;
      case 5:
        sid = w.string(g.bytes);
        is_text = true;
        break;
      case 7:
        sid = lookup.stat_name(g.as_int64());
        is_text = true;
        break;
      default:
        continue;
    }
    if (which == 0 && is_text) hlo_op = sid;
    if (which == 1 && is_text) hlo_module = sid;
    if (which == 2 && !is_text) program_id = number;
  }
}

// Returns the absolute offset just past the last event decoded.
inline size_t XSpaceImporter::decode_chunk(const Chunk& c, WorkerTables& w) {
  const Plane& plane = p_->planes[c.plane];
  const PlaneLookup& lookup = lookups_[c.plane - first_plane()];
  const uint8_t* pbase = reinterpret_cast<const uint8_t*>(plane.bytes.data());
  const uint8_t* p = pbase + c.begin;
  const uint8_t* const line_end = pbase + c.end;
  Events& ev = p_->events;
  const bool wide = ev.wide;
  uint32_t e = c.first_event;
  const uint32_t last = c.first_event + c.count;
  while (e < last && p < line_end) {
    const uint8_t* field = p;
    // The hot path: XLine fields other than events are rare here; anything but a one-byte
    // events tag goes through the general reader.
    if (*p != kEventKey) {
      Reader r(std::string_view(reinterpret_cast<const char*>(p), line_end - p), origin_);
      Field f;
      r.next(f);
      if (f.number == xline::kEvents) fail_at(field, "XLine.events with an unusual encoding");
      p = skip_field(field, line_end);
      continue;
    }
    ++p;
    const uint64_t at = static_cast<uint64_t>(p - pbase);
    ev.raw[e] = static_cast<uint32_t>(at);
    if (wide) ev.raw_high[e] = static_cast<uint32_t>(at >> 32);
    uint64_t len = wire::read_varint(p, line_end, origin_);
    if (len > static_cast<uint64_t>(line_end - p)) fail_at(field, "event is longer than its line");
    const uint8_t* q = p;
    const uint8_t* const event_end = p + len;
    p = event_end;

    uint64_t metadata_id = 0, offset_ps = 0, duration_ps = 0;
    StringId hlo_op = 0, hlo_module = 0;
    ProgramId program_id = kNoProgram;
    int64_t correlation = Events::kNoStat, group = Events::kNoStat;
    // A field a writer repeats counts once, at its first occurrence (bits 1, 2, 4 below; 1, 2,
    // 4 of `hot` for the hot stats): protobuf would take the last, but the line's metadata ids
    // (count_line) and the scan (scan_chunks) see the first, and every path must agree.
    unsigned scalars = 0, hot = 0;
    int64_t device_offset = Events::kNoStat, device_duration = Events::kNoStat;
    uint8_t memory_op = 0;
    while (q < event_end) {
      uint8_t tag = *q++;
      switch (tag) {
        case key(xevent::kMetadataId, WireType::kVarint): {
          uint64_t v = wire::read_varint(q, event_end, origin_);
          if (!(scalars & 1)) metadata_id = v;
          scalars |= 1;
          break;
        }
        case key(xevent::kOffsetPs, WireType::kVarint): {
          uint64_t v = wire::read_long_varint(q, event_end, origin_);  // picoseconds: long
          if (!(scalars & 2)) offset_ps = v;
          scalars |= 2;
          break;
        }
        case key(xevent::kDurationPs, WireType::kVarint): {
          uint64_t v = wire::read_long_varint(q, event_end, origin_);  // picoseconds: long
          if (!(scalars & 4)) duration_ps = v;
          scalars |= 4;
          break;
        }
        case key(xevent::kNumOccurrences, WireType::kVarint):  // aggregated events
          wire::read_varint(q, event_end, origin_);
          break;
        case key(xevent::kStats, WireType::kLen): {
          uint64_t slen = wire::read_varint(q, event_end, origin_);
          if (slen > static_cast<uint64_t>(event_end - q))
            fail_at(q, "stat is longer than its event");
          // A serialized XStat starts with its metadata id; only a few ids matter here.
          if (slen >= 2 && q[0] == kStatIdKey) {
            const uint8_t* sq = q + 1;
            int64_t id = static_cast<int64_t>(wire::read_varint(sq, q + slen, origin_));
            if (PlaneLookup::is(id, lookup.hlo_op_stat) ||
                PlaneLookup::is(id, lookup.hlo_module_stat) ||
                PlaneLookup::is(id, lookup.program_id_stat))
              decode_hot_stat(std::string_view(reinterpret_cast<const char*>(q), slen), lookup, w,
                              hlo_op, hlo_module, program_id, hot);
            else if (lookup.kernel_ids && PlaneLookup::is(id, lookup.correlation_stat))
              own_int_stat(sq, q + slen, correlation);
            else if (lookup.kernel_ids && PlaneLookup::is(id, lookup.group_stat))
              own_int_stat(sq, q + slen, group);
            else if (c.device_clock && id == lookup.device_offset_stat)
              own_int_stat(sq, q + slen, device_offset);
            else if (c.device_clock && id == lookup.device_duration_stat)
              own_int_stat(sq, q + slen, device_duration);
            else if (lookup.memory_ops && (id == lookup.memcpy_stat || id == lookup.memset_stat))
              memory_op |= id == lookup.memcpy_stat ? Events::kMemcpyStat : Events::kMemsetStat;
          }
          q += slen;
          break;
        }
        default:
          q = skip_field(q - 1, event_end);
          break;
      }
    }
    uint32_t mi = lookup.metadata(static_cast<int64_t>(metadata_id));
    const EventMetadata& m = p_->event_metadata[mi];
    ev.start_ps[e] = event_start(field, c.line_base_ps + shift_ps_, offset_ps, duration_ps);
    ev.duration_ps[e] = static_cast<int64_t>(duration_ps);
    ev.metadata[e] = mi;
    ev.hlo_op[e] = hlo_op != 0 ? hlo_op : m.hlo_op;
    if (hlo_module == 0) hlo_module = m.hlo_module;
    if (program_id == kNoProgram) program_id = m.program_id;
    ev.module[e] = w.module(LocalModule{hlo_module, program_id});
    if (lookup.kernel_ids) {
      ev.correlation_id[e] = correlation;
      ev.group_id[e] = group;
    }
    if (c.device_clock) {
      // Both stats as plain integers, the duration not negative: else the event keeps the
      // host-aligned timing alone.
      bool usable = device_offset >= 0 && device_duration >= 0;
      ev.device_start_ps[e] = usable ? device_offset : Events::kNoStat;
      ev.device_duration_ps[e] = usable ? device_duration : Events::kNoStat;
    }
    if (lookup.memory_ops) ev.memory_op[e] = memory_op;
    ++e;
  }
  if (e != last) fail_at(p, "line ended before its events were read (corrupt file)");
  return static_cast<size_t>(p - origin_);
}

inline void XSpaceImporter::decode_events(const std::vector<uint32_t>& chunks) {
  unsigned threads = thread_count(chunks.size());
  workers_.resize(threads);
  for (unsigned t = 0; t < threads; ++t) workers_[t].tag = kLocalBit | (t << kWorkerShift);
  // Decoded bytes go back to the kernel, a batch at a time per thread.
  std::vector<BatchedRelease> released;
  for (unsigned t = 0; t < threads; ++t) released.emplace_back(*buf_);
  parallel_for(threads, chunks.size(), [&](size_t i, unsigned t) {
    const Chunk& c = chunks_[chunks[i]];
    size_t end = decode_chunk(c, workers_[t]);
    if (!opt_.release_pages) return;
    size_t begin = static_cast<size_t>(p_->planes[c.plane].bytes.data() -
                                       reinterpret_cast<const char*>(origin_)) +
                   c.begin;
    released[t].add(begin, end);
  });
  for (BatchedRelease& r : released) r.flush();
}

inline void XSpaceImporter::merge_worker_tables(const std::vector<uint32_t>& chunks) {
  // Worker-local strings and modules become profile-wide ids; then events are remapped.
  std::vector<std::vector<StringId>> string_map(workers_.size());
  std::vector<std::vector<uint32_t>> module_map(workers_.size());
  auto global_string = [&](StringId id) -> StringId {
    if (!(id & kLocalBit)) return id;
    return string_map[(id & ~kLocalBit) >> kWorkerShift][id & ((1u << kWorkerShift) - 1)];
  };
  for (size_t t = 0; t < workers_.size(); ++t) {
    for (std::string_view s : workers_[t].strings)
      string_map[t].push_back(p_->strings.intern_view(s));
  }
  for (size_t t = 0; t < workers_.size(); ++t) {
    for (const LocalModule& m : workers_[t].modules)
      module_map[t].push_back(p_->intern_module(ModuleKey{global_string(m.name), m.program_id}));
  }
  Events& ev = p_->events;
  parallel_for(thread_count(chunks.size()), chunks.size(), [&](size_t i) {
    const Chunk& c = chunks_[chunks[i]];
    for (uint32_t e = c.first_event; e < c.first_event + c.count; ++e) {
      ev.hlo_op[e] = global_string(ev.hlo_op[e]);
      uint32_t m = ev.module[e];
      if (m & kLocalBit)
        ev.module[e] = module_map[(m & ~kLocalBit) >> kWorkerShift][m & ((1u << kWorkerShift) - 1)];
    }
  });
}

// Puts the events of each of `lines` in time order (the longer first at one start), in every
// column the line has.
inline void XSpaceImporter::sort_lines(const std::vector<uint32_t>& lines) {
  Events& ev = p_->events;
  for (uint32_t li : lines) {
    const Line& line = p_->lines[li];
    const PlaneLookup& lookup = lookups_[line.plane - first_plane_];
    sort_line_events(ev, line.first_event, line.event_count,
                     {lookup.kernel_ids, line_device_clock(li), lookup.memory_ops});
  }
}

void XSpaceImporter::decode_lines(Profile& profile, const std::vector<uint32_t>& lines) {
  p_ = &profile;
  // The stat maps live in the planes, which no longer move once the import is done.
  for (size_t i = 0; i < lookups_.size(); ++i)
    lookups_[i].stat_names = &p_->planes[first_plane_ + i].stat_names;
  // Multi-host profiles share the earliest line of all hosts as time zero.
  shift_ps_ = host_shift_ps(*p_);
  std::vector<uint32_t> chunks;
  for (uint32_t li : lines)
    for (uint32_t c : line_chunks_[li - first_line_]) chunks.push_back(c);
  try {
    naming_file(*buf_, [&] { decode_events(chunks); });
  } catch (const InputError&) {
    p_ = nullptr;
    workers_.clear();
    throw;
  }
  merge_worker_tables(chunks);
  sort_lines(lines);
  for (uint32_t li : lines) {
    p_->lines[li].decoded = true;
    const PlaneLookup& lookup = lookups_[p_->lines[li].plane - first_plane_];
    p_->lines[li].kernel_ids = lookup.kernel_ids;
    p_->lines[li].device_clock = line_device_clock(li);
    p_->lines[li].memory_ops = lookup.memory_ops;
  }
  workers_.clear();
  p_ = nullptr;
}

// Throws for the event at `event` whose times event_start() found out of range.
void XSpaceImporter::event_time_error(const uint8_t* event, uint64_t offset_ps,
                                      uint64_t duration_ps) const {
  auto offset = static_cast<int64_t>(offset_ps);
  auto duration = static_cast<int64_t>(duration_ps);
  std::string why = duration < 0
                        ? "event with negative duration (" + std::to_string(duration) + " ps)"
                    : !duration_in_range(duration)
                        ? "event duration_ps " + std::to_string(duration) + " is longer than the " +
                              kMaxTimeText + " a profile can span"
                        : "event offset_ps " + std::to_string(offset) + " puts it more than " +
                              kMaxTimeText + " from the profile's start";
  throw InputError("", "out of range: " + why, event - origin_);
}

}  // namespace jaxprof::xspace_import
