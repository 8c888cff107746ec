// The XSpace importer behind formats/xplane/xplane.h, private to this folder: one XSpaceImporter
// per file, its members in the files of the import's stages, cut as a trace processor cuts its
// importers:
//   xspace_tokenizer.cc     bytes to records: the first pass over tags and lengths (planes,
//                           lines, events counted per line, where each chunk of a line starts)
//   xspace_commit.cc        records into the Profile: planes with their kinds and lookups,
//                           metadata, lines, and the event slots each chunk decodes into
//   xspace_decoder.cc       a line chunk's events and stats into the event columns, on demand
//   xspace_event_source.cc  the other reads on demand: an event's stats, a line scanned undecoded
//   xspace_parallel.h       how the work is spread over threads
//   xplane.cc               the entry points: one file, several hosts' files, finish_import
// The helpers that hot loops in several of these files call are defined in the class here, so
// that each loop still inlines them; those called from one file only are defined `inline` there.
// (The library is position-independent code: GCC inlines no function that could be interposed,
// and weighs one declared inline more readily.)
#pragma once

#include <bit>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "jaxprof/common/error.h"
#include "jaxprof/formats/xplane/xplane.h"
#include "jaxprof/model/op_lines.h"
#include "jaxprof/model/profile.h"
#include "jaxprof/model/time_range.h"
#include "jaxprof/wire/reader.h"

namespace jaxprof::xspace_import {

using wire::Field;
using wire::Reader;
using wire::WireType;

// Field numbers (xplane.proto).
namespace xspace {
constexpr uint32_t kPlanes = 1, kErrors = 2, kWarnings = 3, kHostnames = 4;
}
namespace xplane {
constexpr uint32_t kId = 1, kName = 2, kLines = 3, kEventMetadata = 4, kStatMetadata = 5,
                   kStats = 6;
}
namespace xline {
constexpr uint32_t kId = 1, kName = 2, kTimestampNs = 3, kEvents = 4, kDisplayName = 11;
}
namespace xevent {
constexpr uint32_t kMetadataId = 1, kOffsetPs = 2, kDurationPs = 3, kStats = 4, kNumOccurrences = 5;
}
namespace xmeta {
constexpr uint32_t kName = 2, kDisplayName = 4, kStats = 5;
}
namespace xstat {
constexpr uint32_t kMetadataId = 1, kUint64Value = 3, kInt64Value = 4;
}

// A field's one-byte key (tag) as it appears on the wire, for the hot loops.
constexpr uint8_t key(uint32_t field, WireType type) {
  return static_cast<uint8_t>(field << 3 | static_cast<uint32_t>(type));
}
constexpr uint8_t kEventKey = key(xline::kEvents, WireType::kLen);
constexpr uint8_t kStatIdKey = key(xstat::kMetadataId, WireType::kVarint);

// Events per unit of parallel work.
constexpr uint32_t kChunkEvents = 16384;
// Worker-local ids carry this bit until merged into the profile-wide tables.
constexpr uint32_t kLocalBit = 0x80000000u;
constexpr int kWorkerShift = 24;

struct Chunk {
  uint32_t plane;        // index into Profile::planes
  uint64_t begin;        // offset in the plane bytes of the first event field of the chunk
  uint64_t end;          // offset in the plane bytes just past the line message
  uint32_t count;        // events to decode
  uint32_t first_event;  // destination index in Profile::events
  int64_t line_base_ps;  // (line timestamp - host base) * 1000
  bool device_clock;     // decode the device clock stats (op lines of planes that declare them)
};

// Per-plane lookups the workers need; read-only once built.
struct PlaneLookup {
  std::vector<uint32_t> dense_metadata;  // metadata id -> global index, when ids are small
  std::unordered_map<int64_t, uint32_t> sparse_metadata;
  int64_t hlo_op_stat = -1, hlo_module_stat = -1, program_id_stat = -1;
  // Decoded into Events::correlation_id and group_id on device planes (-1: none; else the id).
  int64_t correlation_stat = -1, group_stat = -1;
  bool kernel_ids = false;  // a device plane that declares either
  // Decoded into Events::device_start_ps and device_duration_ps on device planes that declare
  // both (TPU op events), and into Events::memory_op on device planes declaring either copy stat.
  int64_t device_offset_stat = -1, device_duration_stat = -1;
  int64_t memcpy_stat = -1, memset_stat = -1;
  bool device_clock = false;
  bool memory_ops = false;
  // Stat metadata id -> name, for refs; ids are dense small integers in practice.
  std::vector<StringId> dense_stat_names;
  std::unordered_map<StringId, int64_t> stat_id_of_name;  // first id with each name
  const std::unordered_map<int64_t, StringId>* stat_names = nullptr;

  StringId stat_name(int64_t id) const {
    if (id >= 0 && static_cast<uint64_t>(id) < dense_stat_names.size()) return dense_stat_names[id];
    auto it = stat_names->find(id);
    return it == stat_names->end() ? 0 : it->second;
  }

  // Whether stat id `id` is the one a plane declared as `declared` (-1: it declares none).
  static bool is(int64_t id, int64_t declared) { return declared >= 0 && id == declared; }

  uint32_t metadata(int64_t id) const {
    if (id >= 0 && static_cast<uint64_t>(id) < dense_metadata.size()) return dense_metadata[id];
    auto it = sparse_metadata.find(id);
    return it == sparse_metadata.end() ? 0 : it->second;
  }
};

struct LocalModule {
  StringId name;  // may itself be worker-local
  ProgramId program_id;
  bool operator==(const LocalModule&) const = default;
};
struct LocalModuleHash {
  size_t operator()(const LocalModule& m) const {
    return std::hash<uint64_t>()(m.program_id) * 31 + m.name;
  }
};

// What one worker interned on its own, to be merged after the parallel phase.
struct WorkerTables {
  std::vector<std::string_view> strings;
  std::unordered_map<std::string_view, uint32_t> string_index;
  std::vector<LocalModule> modules;
  std::unordered_map<LocalModule, uint32_t, LocalModuleHash> module_index;
  uint32_t tag = 0;  // kLocalBit | worker << kWorkerShift

  uint32_t string(std::string_view s) {
    if (s.empty()) return 0;
    auto [it, inserted] = string_index.try_emplace(s, static_cast<uint32_t>(strings.size()));
    if (inserted) strings.push_back(s);
    return tag | it->second;
  }
  uint32_t module(LocalModule m) {
    if (m.name == 0 && m.program_id == kNoProgram) return 0;
    if (m == last_module) return last_module_id;  // neighbouring events share their module
    last_module = m;
    last_module_id = module_slow(m);
    return last_module_id;
  }
  LocalModule last_module{0, kNoProgram};
  uint32_t last_module_id = 0;
  uint32_t module_slow(LocalModule m) {
    auto [it, inserted] = module_index.try_emplace(m, static_cast<uint32_t>(modules.size()));
    if (inserted) modules.push_back(m);
    return tag | it->second;
  }
};

// Decodes an XStat message; `stat_names` resolves metadata ids (for the name, unless the caller
// knows it already and passes `with_name` false, and for refs).
inline Stat decode_stat(std::string_view bytes,
                        const std::unordered_map<int64_t, StringId>& stat_names,
                        const StringTable& strings, const uint8_t* origin, bool with_name = true) {
  Stat s;
  wire::Reader r(bytes, origin);
  wire::Field f;
  auto name_of = [&](int64_t id) -> StringId {
    auto it = stat_names.find(id);
    return it == stat_names.end() ? 0 : it->second;
  };
  while (r.next(f)) {
    switch (f.number) {
      case 1:
        if (with_name) s.name = name_of(f.as_int64());
        break;
      case 2:
        s.value.kind = StatKind::kDouble;
        s.value.d = f.type == wire::WireType::kFixed64 ? f.as_double() : 0.0;
        break;
      case 3:
        s.value.kind = StatKind::kUint64;
        s.value.u = f.value;
        break;
      case 4:
        s.value.kind = StatKind::kInt64;
        s.value.i = f.as_int64();
        break;
      case 5:
        s.value.kind = StatKind::kString;
        s.value.str = f.bytes;
        break;
      case 6:
        s.value.kind = StatKind::kBytes;
        s.value.str = f.bytes;
        break;
      case 7:
        s.value.kind = StatKind::kRef;
        s.value.u = f.value;
        s.value.str = strings[name_of(f.as_int64())];
        break;
      default:
        break;
    }
  }
  return s;
}

// Runs `step` and rethrows its InputError naming the buffer's file: the wire reader only sees
// bytes. Returns what `step` returns.
template <typename Fn>
auto naming_file(const Buffer& buffer, Fn&& step) -> decltype(step()) {
  try {
    return step();
  } catch (const InputError& e) {
    if (!e.file().empty()) throw;
    std::string reason = e.reason();
    if (buffer.compressed()) reason += " in the decompressed data";
    throw InputError(buffer.path(), reason, e.offset());
  }
}

// Scans an XSpace into the Profile (planes, metadata, lines with their event counts), then stays
// with the Profile as the EventSource that decodes a line's events when an analysis asks for it
// and reads stats from the file.
class XSpaceImporter : public EventSource {
 public:
  XSpaceImporter(std::shared_ptr<Buffer> buf, const ImportOptions& opt)
      : p_(nullptr), buf_(std::move(buf)), opt_(opt), origin_(buf_->data()) {}

  // The part of the import that needs no Profile: where the planes are, the XSpace's errors and
  // warnings, and every line's header and event count (on up to `threads` threads, 0 = the
  // import's own count). Several files can be prepared at once. (xspace_tokenizer.cc)
  void prepare(unsigned threads = 0);

  const Buffer& buffer() const { return *buf_; }
  // Events in the file: what commit() adds to Profile::events.
  uint64_t event_count() const { return events_; }

  // Adds the prepared file to `p` as host `host`: planes, metadata, lines with their event
  // counts, and the event slots its lines will be decoded into. (xspace_commit.cc)
  void commit(Profile& p, const std::string& host);

  // Decodes the events of `lines` into the event slots commit() laid out. (xspace_decoder.cc)
  void decode_lines(Profile& profile, const std::vector<uint32_t>& lines) override;

  // Stats are read from the file on demand: a damaged one is found here, named by its file.
  // Lines can be scanned without decoding them. (xspace_event_source.cc)
  std::vector<Stat> event_stats(const Profile& p, uint32_t plane, uint32_t e) const override;
  void find_event_stats(const Profile& p, uint32_t plane, uint32_t e,
                        std::span<const StringId> names,
                        std::span<std::optional<StatValue>> out) const override;
  void find_scanned_event_stats(const Profile& p, uint32_t plane, uint64_t raw,
                                std::span<const StringId> names,
                                std::span<std::optional<StatValue>> out) const override;
  std::unique_ptr<StatReader> stat_reader(const Profile& p, uint32_t plane,
                                          std::span<const StringId> names) const override;
  bool can_scan_lines() const override { return true; }
  void release_line_bytes(const Profile& p, uint32_t li) const override;
  bool scan_line(const Profile& p, uint32_t li, std::span<const uint8_t> want,
                 std::vector<ScannedEvent>& out) const override;
  bool visit_line(const Profile& p, uint32_t li, std::span<const uint8_t> want,
                  std::span<const StringId> names, const LineVisitor& visit) const override;
  bool plane_may_have_stat(const Profile& p, uint32_t plane, std::string_view name) const override;
  std::vector<Stat> metadata_stats(const Profile& p, uint32_t metadata) const override;

 private:
  // A line segment as found in the file (one XLine message); several segments with the same id
  // in one plane are one timeline.
  struct PendingLine {
    uint32_t line;  // index into Profile::lines
    int64_t timestamp_ns = 0;
    uint32_t events = 0;
    std::vector<std::pair<uint64_t, uint32_t>> chunk_starts;  // (offset, event index in segment)
    uint64_t end = 0;                                         // offset past the segment
    std::vector<uint64_t> metadata_bits;  // see Line::metadata_bits; empty when unknown
  };

  // One XLine's header fields and event count, with where every kChunkEvents-th event starts, as
  // count_line reads them.
  struct CountedLine {
    PendingLine pending;
    int64_t id = 0;
    std::string_view name, display_name;
  };

  // An XLine message as prepare() finds it, before it is counted.
  struct RawLine {
    uint32_t plane;  // index into planes_
    std::string_view bytes;
  };

  // At most this many names are looked up by stat id; more go through stats_at().
  static constexpr size_t kMaxNames = 8;

  // The stats scan_chunks reads of each event it yields, by stat id (ids[i] < 0: none), into
  // out[i]: the event's own first stat of each.
  struct OwnStats {
    int64_t ids[kMaxNames];
    size_t n = 0;
    std::optional<StatValue>* out = nullptr;
  };
  class IdStatReader;  // stat_reader()'s

  // xspace_tokenizer.cc
  void check_format();
  void throw_if_cut_short(int64_t offset) const;
  CountedLine count_line(std::string_view plane_bytes, std::string_view bytes) const;
  void note_metadata_id(const uint8_t* p, const uint8_t* end, std::vector<uint64_t>& bits) const;

  // xspace_commit.cc
  void scan_plane(std::string_view bytes);
  void add_stat_metadata(Plane& plane, PlaneLookup& lookup,
                         const std::vector<std::string_view>& entries);
  void add_event_metadata(uint32_t plane_index, PlaneLookup& lookup,
                          const std::vector<std::string_view>& entries);
  void register_line(uint32_t plane_index, CountedLine counted,
                     std::unordered_map<int64_t, uint32_t>& line_by_id);
  void register_lines();
  void layout_events(int64_t host_base);
  int64_t host_shift_ps(const Profile& p) const;

  // xspace_decoder.cc
  void decode_events(const std::vector<uint32_t>& chunks);
  size_t decode_chunk(const Chunk& c, WorkerTables& w);
  void own_int_stat(const uint8_t* value, const uint8_t* end, int64_t& out) const;
  void decode_hot_stat(std::string_view bytes, const PlaneLookup& lookup, WorkerTables& w,
                       StringId& hlo_op, StringId& hlo_module, ProgramId& program_id,
                       unsigned& seen);
  [[noreturn]] void event_time_error(const uint8_t* event, uint64_t offset_ps,
                                     uint64_t duration_ps) const;
  void merge_worker_tables(const std::vector<uint32_t>& chunks);
  void sort_lines(const std::vector<uint32_t>& lines);

  // xspace_event_source.cc
  std::vector<Stat> stats_at(const Profile& p, uint32_t plane, uint64_t raw) const;
  bool stat_ids(uint32_t plane, std::span<const StringId> names, int64_t* ids) const;
  void find_stats_at(const Profile& p, uint32_t plane, uint64_t raw,
                     std::span<const StringId> names,
                     std::span<std::optional<StatValue>> out) const;
  void stats_by_id(const Profile& p, uint32_t plane, uint64_t raw, const int64_t* ids, size_t n,
                   std::optional<StatValue>* out) const;
  void read_stat_value(const Profile& p, const Plane& pl, const uint8_t* stat, const uint8_t* value,
                       const uint8_t* end, StatValue& out) const;
  static bool in_line_order(const ScannedEvent& a, const ScannedEvent& b);
  template <typename Sink>
  void scan_with_file_name(const Profile& p, uint32_t li, std::span<const uint8_t> want,
                           Sink&& sink, const OwnStats* stats = nullptr) const;
  template <typename Sink>
  void scan_chunks(const Profile& p, uint32_t li, std::span<const uint8_t> want, Sink&& sink,
                   const OwnStats* stats) const;
  size_t read_own_stat(const Profile& p, uint32_t plane, const uint8_t* stat, const uint8_t* end,
                       const OwnStats& stats) const;

  // Called from the files above, from hot loops most of them: defined here to stay inline.
  unsigned thread_count(size_t work_items) const {
    unsigned threads = count_threads_ != 0 ? count_threads_
                       : opt_.threads != 0 ? opt_.threads
                                           : std::max(1u, std::thread::hardware_concurrency());
    return std::max<unsigned>(1, std::min<size_t>({threads, work_items, 64}));
  }

  // Where the varint at q (q < e) ends, without a branch per byte where 8 bytes are readable: its
  // first byte below 0x80 ends it. Unchecked: a varint running past e gives a position past e.
  static const uint8_t* after_varint(const uint8_t* q, const uint8_t* e) {
    if (std::endian::native == std::endian::little && e - q >= 8) {
      uint64_t word;
      std::memcpy(&word, q, 8);
      if (uint64_t stops = ~word & 0x8080808080808080ull)
        return q + std::countr_zero(stops) / 8 + 1;
    }
    while (q < e && (*q & 0x80)) ++q;
    return q + 1;
  }

  [[noreturn]] void fail_at(const uint8_t* at, const char* reason) const {
    wire::fail(origin_, at, reason);
  }

  // The event's start on the common clock, from its line's start there and its own offset_ps
  // (an int64 on the wire), checked with its duration against the model's range. The offset is
  // checked before it is added: the line's start is within the range, so the sum of the two
  // cannot overflow then.
  [[gnu::always_inline]] int64_t event_start(const uint8_t* event, int64_t line_start_ps,
                                             uint64_t offset_ps, uint64_t duration_ps) const {
    const auto offset = static_cast<int64_t>(offset_ps);
    if (!time_in_range(offset) || !duration_in_range(static_cast<int64_t>(duration_ps)))
        [[unlikely]]
      event_time_error(event, offset_ps, duration_ps);
    const int64_t start = line_start_ps + offset;
    if (!time_in_range(start)) [[unlikely]]
      event_time_error(event, offset_ps, duration_ps);
    return start;
  }

  // Skips the field starting at p (its tag included); returns the position after it.
  const uint8_t* skip_field(const uint8_t* p, const uint8_t* end) const {
    Reader r(std::string_view(reinterpret_cast<const char*>(p), end - p), origin_);
    Field f;
    r.next(f);
    switch (f.type) {
      case WireType::kLen:
        return reinterpret_cast<const uint8_t*>(f.bytes.data()) + f.bytes.size();
      default: {
        // Re-read the tag and value lengths: varint, fixed32 or fixed64.
        const uint8_t* q = p;
        wire::read_varint(q, end, origin_);
        if (f.type == WireType::kVarint)
          wire::read_varint(q, end, origin_);
        else
          q += f.type == WireType::kFixed64 ? 8 : 4;
        return q;
      }
    }
  }

  // Integer stats (ids, counts, sizes) are the common case: when the XStat's fields after its
  // metadata id, [value, end), are one varint int64 or uint64, its bits and kind; else false.
  bool plain_int_value(const uint8_t* value, const uint8_t* end, uint64_t& bits,
                       StatKind& kind) const {
    constexpr uint8_t kUint = key(xstat::kUint64Value, WireType::kVarint);
    constexpr uint8_t kInt = key(xstat::kInt64Value, WireType::kVarint);
    if (value >= end || (*value != kUint && *value != kInt)) return false;
    const uint8_t* r = value + 1;
    bits = wire::read_long_varint(r, end, origin_);
    kind = *value == kUint ? StatKind::kUint64 : StatKind::kInt64;
    return r == end;
  }

  uint32_t first_plane() const { return first_plane_; }
  // Whether line li's events get their device clock decoded: op lines of a plane whose events
  // may carry it. Other lines (modules, steps, trace-mes) never need it, and a TPU profile has
  // many of them.
  bool line_device_clock(uint32_t li) const {
    const Line& line = p_->lines[li];
    return lookups_[line.plane - first_plane_].device_clock && is_op_line_name(p_->str(line.name));
  }

  Profile* p_;  // the profile being filled; only set while commit() or decode() is running
  std::shared_ptr<Buffer> buf_;
  ImportOptions opt_;
  const uint8_t* origin_;
  uint32_t host_index_ = 0;
  uint32_t buffer_index_ = 0;
  uint32_t source_index_ = 0;
  uint32_t first_plane_ = 0;
  uint32_t first_line_ = 0;
  std::vector<PlaneLookup> lookups_;
  // What prepare() found, for commit().
  std::vector<std::string_view> planes_;
  std::vector<std::string> errors_, warnings_, hostnames_;
  std::vector<RawLine> raw_lines_;
  std::vector<CountedLine> counted_;
  uint64_t events_ = 0;
  unsigned count_threads_ = 0;
  std::vector<PendingLine> pending_;
  std::vector<Chunk> chunks_;
  std::vector<std::vector<uint32_t>> line_chunks_;  // per line of this file: its chunks
  int64_t host_base_ns_ = 0;
  int64_t shift_ps_ = 0;
  std::vector<WorkerTables> workers_;
};

}  // namespace jaxprof::xspace_import
