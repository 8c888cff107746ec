#include "jaxprof/formats/xplane/xplane.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstring>
#include <limits>
#include <numeric>
#include <thread>
#include <unordered_map>

#include "jaxprof/common/error.h"
#include "jaxprof/model/invariants.h"
#include "jaxprof/model/op_lines.h"
#include "jaxprof/model/time_range.h"
#include "jaxprof/wire/reader.h"

namespace jaxprof {

namespace {

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
  uint32_t begin;        // offset in the plane bytes of the first event field of the chunk
  uint32_t end;          // offset in the plane bytes just past the line message
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

// Decodes an XStat message; `stat_names` resolves metadata ids (for the name, unless the caller
// knows it already and passes `with_name` false, and for refs).
Stat decode_stat(std::string_view bytes, const std::unordered_map<int64_t, StringId>& stat_names,
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

// The HLO instruction name from TPU-style metadata names: "%fusion.3 = f32[...] fusion(...)".
std::string_view hlo_name_from_text(std::string_view name) {
  if (!name.starts_with('%')) return {};
  size_t eq = name.find(" = ");
  if (eq == std::string_view::npos) return {};
  return name.substr(1, eq - 1);
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
  // import's own count). Several files can be prepared at once.
  void prepare(unsigned threads = 0) {
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
    parallel_for(raw_lines_.size(), [&](size_t i) {
      const RawLine& l = raw_lines_[i];
      counted_[i] = count_line(planes_[l.plane], l.bytes);
    });
    count_threads_ = 0;
    for (const CountedLine& c : counted_) events_ += c.pending.events;
    if (opt_.release_pages && opt_.release_counted) buf_->release(0, buf_->size());
  }

  const Buffer& buffer() const { return *buf_; }
  // Events in the file: what commit() adds to Profile::events.
  uint64_t event_count() const { return events_; }

  // Adds the prepared file to `p` as host `host`: planes, metadata, lines with their event
  // counts, and the event slots its lines will be decoded into.
  void commit(Profile& p, const std::string& host) {
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

  void decode_lines(Profile& profile, const std::vector<uint32_t>& lines) override {
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

  // Stats are read from the file on demand: a damaged one is found here, named by its file.
  std::vector<Stat> event_stats(const Profile& p, uint32_t plane, uint32_t e) const override {
    return naming_file(*buf_, [&] { return stats_at(p, plane, p.events.raw[e]); });
  }

  void find_event_stats(const Profile& p, uint32_t plane, uint32_t e,
                        std::span<const StringId> names,
                        std::span<std::optional<StatValue>> out) const override {
    naming_file(*buf_, [&] { find_stats_at(p, plane, p.events.raw[e], names, out); });
  }

  void find_scanned_event_stats(const Profile& p, uint32_t plane, uint32_t raw,
                                std::span<const StringId> names,
                                std::span<std::optional<StatValue>> out) const override {
    naming_file(*buf_, [&] { find_stats_at(p, plane, raw, names, out); });
  }

  // The stats of the XEvent at `raw` in the plane bytes.
  std::vector<Stat> stats_at(const Profile& p, uint32_t plane, uint32_t raw) const {
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

  // At most this many names are looked up by stat id; more go through stats_at().
  static constexpr size_t kMaxNames = 8;

  // The stats scan_chunks reads of each event it yields, by stat id (ids[i] < 0: none), into
  // out[i]: the event's own first stat of each.
  struct OwnStats {
    int64_t ids[kMaxNames];
    size_t n = 0;
    std::optional<StatValue>* out = nullptr;
  };

  // The stat metadata ids of `names` in the plane (-1: the plane has none); false when it has
  // none of them.
  bool stat_ids(uint32_t plane, std::span<const StringId> names, int64_t* ids) const {
    const PlaneLookup& lookup = lookups_[plane - first_plane_];
    bool any = false;
    for (size_t i = 0; i < names.size(); ++i) {
      auto it = lookup.stat_id_of_name.find(names[i]);
      ids[i] = it == lookup.stat_id_of_name.end() ? -1 : it->second;
      any |= ids[i] >= 0;
    }
    return any;
  }

  void find_stats_at(const Profile& p, uint32_t plane, uint32_t raw,
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

  // Sets the unset out[i] to the value of the event's first own stat with stat id ids[i].
  void stats_by_id(const Profile& p, uint32_t plane, uint32_t raw, const int64_t* ids, size_t n,
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
      if (slen > static_cast<uint64_t>(event_end - at))
        fail_at(at, "stat is longer than its event");
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

  // The value of the XStat [stat, end) into `out` (in place: this runs per event); `value` is
  // where its fields after the metadata id begin.
  void read_stat_value(const Profile& p, const Plane& pl, const uint8_t* stat, const uint8_t* value,
                       const uint8_t* end, StatValue& out) const {
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

  // find_stats_at with the ids resolved once.
  class IdStatReader final : public StatReader {
   public:
    IdStatReader(const XSpaceImporter& importer, const Profile& p, uint32_t plane,
                 std::span<const StringId> names)
        : importer_(importer), p_(p), plane_(plane), n_(names.size()) {
      any_ = importer.stat_ids(plane, names, ids_);
    }
    void read(const ScannedEvent& e, std::span<std::optional<StatValue>> out) const override {
      for (auto& o : out) o.reset();
      if (!any_) return;
      uint32_t raw = e.event == ScannedEvent::kNotDecoded ? e.raw : p_.events.raw[e.event];
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

  std::unique_ptr<StatReader> stat_reader(const Profile& p, uint32_t plane,
                                          std::span<const StringId> names) const override {
    if (names.size() > kMaxNames) return EventSource::stat_reader(p, plane, names);
    return std::make_unique<IdStatReader>(*this, p, plane, names);
  }

  bool can_scan_lines() const override { return true; }

  bool scan_line(const Profile& p, uint32_t li, std::span<const uint8_t> want,
                 std::vector<ScannedEvent>& out) const override {
    scan_with_file_name(p, li, want, [&](const ScannedEvent& e) { out.push_back(e); });
    // The order the decoded line would have (sort_lines): a stable sort of the whole line keeps
    // any subset of it in the order a stable sort of the subset gives.
    if (!std::is_sorted(out.begin(), out.end(), in_line_order))
      std::stable_sort(out.begin(), out.end(), in_line_order);
    return true;
  }

  bool visit_line(const Profile& p, uint32_t li, std::span<const uint8_t> want,
                  std::span<const StringId> names, const LineVisitor& visit) const override {
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

  static bool in_line_order(const ScannedEvent& a, const ScannedEvent& b) {
    if (a.start_ps != b.start_ps) return a.start_ps < b.start_ps;
    return a.duration_ps > b.duration_ps;
  }

  template <typename Sink>
  void scan_with_file_name(const Profile& p, uint32_t li, std::span<const uint8_t> want,
                           Sink&& sink, const OwnStats* stats = nullptr) const {
    naming_file(*buf_, [&] { scan_chunks(p, li, want, sink, stats); });
  }

  bool plane_may_have_stat(const Profile& p, uint32_t plane, std::string_view name) const override {
    // Every stat names itself by a stat metadata id of its plane.
    StringId id = p.strings.find(name);
    return id != UINT32_MAX && lookups_[plane - first_plane_].stat_id_of_name.count(id) > 0;
  }

  std::vector<Stat> metadata_stats(const Profile& p, uint32_t metadata) const override {
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

 private:
  // A line segment as found in the file (one XLine message); several segments with the same id
  // in one plane are one timeline.
  struct PendingLine {
    uint32_t line;  // index into Profile::lines
    int64_t timestamp_ns = 0;
    uint32_t events = 0;
    std::vector<std::pair<uint32_t, uint32_t>> chunk_starts;  // (offset, event index in segment)
    uint32_t end = 0;                                         // offset past the segment
    std::vector<uint64_t> metadata_bits;  // see Line::metadata_bits; empty when unknown
  };

  // A file cut off while it was written ends inside one of the XSpace's own fields (a plane,
  // mostly): when the field at `offset` runs past the end with a length a plane can have (damaged
  // bytes give lengths of terabytes), says so.
  void throw_if_cut_short(int64_t offset) const {
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

  void check_format() {
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

  void scan_plane(std::string_view bytes) {
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
    if (plane.bytes.size() > std::numeric_limits<uint32_t>::max())
      throw InputError("", "plane larger than 4 GiB is not supported",
                       Reader(bytes, origin_).offset_of(bytes));

    PlaneLookup& lookup = lookups_.emplace_back();
    // Stat metadata first: event metadata stats and refs need the names.
    for (std::string_view entry : stat_meta) {
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
    for (std::string_view s : stats)
      plane.stats.push_back(decode_stat(s, plane.stat_names, p_->strings, origin_));
    for (auto [id, name] : plane.stat_names) {
      if (id < 0 || static_cast<uint64_t>(id) >= 4 * plane.stat_names.size() + 1024) continue;
      if (lookup.dense_stat_names.size() <= static_cast<uint64_t>(id))
        lookup.dense_stat_names.resize(id + 1, 0);
      lookup.dense_stat_names[id] = name;
    }

    int64_t max_id = -1;
    std::vector<std::pair<int64_t, uint32_t>> ids;
    ids.reserve(event_meta.size());
    for (std::string_view entry : event_meta) {
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
          if (sname == "hlo_op" && s.value.is_text())
            m.hlo_op = p_->strings.intern_view(s.value.str);
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

  // Reads one XLine's header fields and counts its events, remembering where every
  // kChunkEvents-th event starts. Touches no shared state: lines are counted in parallel.
  struct CountedLine {
    PendingLine pending;
    int64_t id = 0;
    std::string_view name, display_name;
  };
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

  CountedLine count_line(std::string_view plane_bytes, std::string_view bytes) const {
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
          pending.chunk_starts.emplace_back(static_cast<uint32_t>(p - pbase), events);
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
    pending.end = static_cast<uint32_t>(end - pbase);
    return out;
  }

  // The metadata id of an event whose first field is not its metadata id (some writers put the
  // offset first), like the fast path in count_line the first one met; 0, proto3's default, when
  // it has none. Varint and length-delimited fields are stepped over inline: this runs per event.
  void note_metadata_id(const uint8_t* p, const uint8_t* end, std::vector<uint64_t>& bits) const {
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
        if (len > static_cast<uint64_t>(end - p))
          fail_at(p, "event field is longer than its event");
        p += len;
      } else {
        p = skip_field(p, end);
      }
    }
    id %= kLineMetadataBits;
    bits[id / 64] |= uint64_t{1} << (id % 64);
  }

  void register_line(uint32_t plane_index, CountedLine counted,
                     std::unordered_map<int64_t, uint32_t>& line_by_id) {
    PendingLine& pending = counted.pending;
    auto [it, inserted] =
        line_by_id.try_emplace(counted.id, static_cast<uint32_t>(p_->lines.size()));
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
  void register_lines() {
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

  unsigned thread_count(size_t work_items) const {
    unsigned threads = count_threads_ != 0 ? count_threads_
                       : opt_.threads != 0 ? opt_.threads
                                           : std::max(1u, std::thread::hardware_concurrency());
    return std::max<unsigned>(1, std::min<size_t>({threads, work_items, 64}));
  }

  // Runs fn(i, worker) for i in [0, n) on up to thread_count(n) threads (fn(i) also works);
  // rethrows the first exception.
  template <typename Fn>
  void parallel_for(size_t n, Fn&& fn) const {
    unsigned threads = thread_count(n);
    std::atomic<size_t> next{0};
    std::vector<std::exception_ptr> errors(threads);
    auto work = [&](unsigned t) {
      try {
        for (size_t i; (i = next.fetch_add(1)) < n;) {
          if constexpr (std::is_invocable_v<Fn, size_t, unsigned>)
            fn(i, t);
          else
            fn(i);
        }
      } catch (...) {
        errors[t] = std::current_exception();
        next.store(n);
      }
    };
    if (threads == 1) {
      work(0);
    } else {
      std::vector<std::thread> pool;
      for (unsigned t = 0; t < threads; ++t) pool.emplace_back(work, t);
      for (auto& th : pool) th.join();
    }
    for (auto& e : errors)
      if (e) std::rethrow_exception(e);
  }

  void layout_events(int64_t host_base) {
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
                                 ", more than " + kMaxTimeText +
                                 " after the file's earliest line (" + std::to_string(host_base) +
                                 ")");
      for (size_t c = 0; c < l.chunk_starts.size(); ++c) {
        uint32_t begin_index = l.chunk_starts[c].second;
        uint32_t end_index =
            c + 1 < l.chunk_starts.size() ? l.chunk_starts[c + 1].second : l.events;
        line_chunks_[l.line - first_line_].push_back(static_cast<uint32_t>(chunks_.size()));
        chunks_.push_back(Chunk{plane, l.chunk_starts[c].first, l.end, end_index - begin_index,
                                static_cast<uint32_t>(cursor[l.line] + begin_index), base_ps,
                                line_device_clock(l.line)});
      }
      cursor[l.line] += l.events;
    }
  }

  // Returns the absolute offset just past the last event decoded.
  size_t decode_chunk(const Chunk& c, WorkerTables& w) {
    const Plane& plane = p_->planes[c.plane];
    const PlaneLookup& lookup = lookups_[c.plane - first_plane()];
    const uint8_t* pbase = reinterpret_cast<const uint8_t*>(plane.bytes.data());
    const uint8_t* p = pbase + c.begin;
    const uint8_t* const line_end = pbase + c.end;
    Events& ev = p_->events;
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
      ev.raw[e] = static_cast<uint32_t>(p - pbase);
      uint64_t len = wire::read_varint(p, line_end, origin_);
      if (len > static_cast<uint64_t>(line_end - p))
        fail_at(field, "event is longer than its line");
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
            uint64_t v = wire::read_varint(q, event_end, origin_);
            if (!(scalars & 2)) offset_ps = v;
            scalars |= 2;
            break;
          }
          case key(xevent::kDurationPs, WireType::kVarint): {
            uint64_t v = wire::read_varint(q, event_end, origin_);
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

  // Walks the line's events in file order as decode_chunk does, reading the metadata id of each
  // and offset and duration only of those `want` accepts.
  // Calls sink(ScannedEvent) for each event of the line marked in `want`, in file order.
  template <typename Sink>
  void scan_chunks(const Profile& p, uint32_t li, std::span<const uint8_t> want, Sink&& sink,
                   const OwnStats* stats) const {
    const int64_t shift_ps = host_shift_ps(p);
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
        const uint32_t raw = static_cast<uint32_t>(q - pbase);
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
    }
  }

  // The XStat [stat, end) into the first unset stats->out[i] whose id is its own (as stats_by_id).
  // Returns how many it set.
  size_t read_own_stat(const Profile& p, uint32_t plane, const uint8_t* stat, const uint8_t* end,
                       const OwnStats& stats) const {
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

  [[noreturn]] void event_time_error(const uint8_t* event, uint64_t offset_ps,
                                     uint64_t duration_ps) const {
    auto offset = static_cast<int64_t>(offset_ps);
    auto duration = static_cast<int64_t>(duration_ps);
    std::string why = duration < 0
                          ? "event with negative duration (" + std::to_string(duration) + " ps)"
                      : !duration_in_range(duration)
                          ? "event duration_ps " + std::to_string(duration) +
                                " is longer than the " + kMaxTimeText + " a profile can span"
                          : "event offset_ps " + std::to_string(offset) + " puts it more than " +
                                kMaxTimeText + " from the profile's start";
    throw InputError("", "out of range: " + why, event - origin_);
  }

  // Where this file's time zero lies on the profile's common clock (checked by finish_import).
  int64_t host_shift_ps(const Profile& p) const {
    int64_t ps = 0;
    if (!ps_since(host_base_ns_, p.base_ns, ps))
      throw InputError(buf_->path(),
                       "its clock is too far from the other files' to be one timeline");
    return ps;
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

  // The value of an XStat [value, end) (after its metadata id) into `out` as an Events id column
  // holds it, unless an earlier stat of the event set it (its first counts): a varint int64 or
  // uint64 value, else kStatInFile.
  void own_int_stat(const uint8_t* value, const uint8_t* end, int64_t& out) const {
    if (out != Events::kNoStat) return;
    out = Events::kStatInFile;
    uint64_t bits;
    StatKind kind;
    if (!plain_int_value(value, end, bits, kind)) return;
    int64_t v = static_cast<int64_t>(bits);  // as StatValue::as_int gives either kind
    if (v != Events::kNoStat && v != Events::kStatInFile) out = v;
  }

  // `seen` has bit `which` set once the event's first stat of that name was read: only the first
  // counts, as for every other reader of stats (stats_by_id, read_own_stat).
  void decode_hot_stat(std::string_view bytes, const PlaneLookup& lookup, WorkerTables& w,
                       StringId& hlo_op, StringId& hlo_module, ProgramId& program_id,
                       unsigned& seen) {
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

  uint32_t first_plane() const { return first_plane_; }
  // Whether line li's events get their device clock decoded: op lines of a plane whose events
  // may carry it. Other lines (modules, steps, trace-mes) never need it, and a TPU profile has
  // many of them.
  bool line_device_clock(uint32_t li) const {
    const Line& line = p_->lines[li];
    return lookups_[line.plane - first_plane_].device_clock && is_op_line_name(p_->str(line.name));
  }

  void decode_events(const std::vector<uint32_t>& chunks) {
    unsigned threads = thread_count(chunks.size());
    workers_.resize(threads);
    for (unsigned t = 0; t < threads; ++t) workers_[t].tag = kLocalBit | (t << kWorkerShift);
    // Decoded bytes go back to the kernel in batches: each release interrupts the other threads
    // (a TLB shootdown), so not once per chunk.
    constexpr size_t kReleaseBatch = size_t{8} << 20;
    struct Released {
      std::vector<std::pair<size_t, size_t>> ranges;
      size_t bytes = 0;
    };
    std::vector<Released> released(threads);
    auto flush = [&](Released& r) {
      for (auto [b, e] : r.ranges) buf_->release(b, e);
      r.ranges.clear();
      r.bytes = 0;
    };
    parallel_for(chunks.size(), [&](size_t i, unsigned t) {
      const Chunk& c = chunks_[chunks[i]];
      size_t end = decode_chunk(c, workers_[t]);
      if (!opt_.release_pages) return;
      Released& r = released[t];
      size_t begin = static_cast<size_t>(p_->planes[c.plane].bytes.data() -
                                         reinterpret_cast<const char*>(origin_)) +
                     c.begin;
      if (!r.ranges.empty() && r.ranges.back().second >= begin)
        r.ranges.back().second = end;
      else
        r.ranges.emplace_back(begin, end);
      r.bytes += end - begin;
      if (r.bytes >= kReleaseBatch) flush(r);
    });
    for (Released& r : released) flush(r);
  }

  void merge_worker_tables(const std::vector<uint32_t>& chunks) {
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
    parallel_for(chunks.size(), [&](size_t i) {
      const Chunk& c = chunks_[chunks[i]];
      for (uint32_t e = c.first_event; e < c.first_event + c.count; ++e) {
        ev.hlo_op[e] = global_string(ev.hlo_op[e]);
        uint32_t m = ev.module[e];
        if (m & kLocalBit)
          ev.module[e] =
              module_map[(m & ~kLocalBit) >> kWorkerShift][m & ((1u << kWorkerShift) - 1)];
      }
    });
  }

  void sort_lines(const std::vector<uint32_t>& lines) {
    Events& ev = p_->events;
    for (uint32_t li : lines) {
      const Line& line = p_->lines[li];
      uint32_t b = line.first_event, n = line.event_count;
      bool sorted = true;
      for (uint32_t i = b + 1; i < b + n && sorted; ++i) {
        sorted =
            ev.start_ps[i - 1] < ev.start_ps[i] ||
            (ev.start_ps[i - 1] == ev.start_ps[i] && ev.duration_ps[i - 1] >= ev.duration_ps[i]);
      }
      if (sorted) continue;
      std::vector<uint32_t> order(n);
      std::iota(order.begin(), order.end(), b);
      std::stable_sort(order.begin(), order.end(), [&](uint32_t x, uint32_t y) {
        if (ev.start_ps[x] != ev.start_ps[y]) return ev.start_ps[x] < ev.start_ps[y];
        return ev.duration_ps[x] > ev.duration_ps[y];
      });
      auto permute = [&](auto& column) {
        using T = typename std::decay_t<decltype(column)>::value_type;  // Column<T>
        std::vector<T> tmp(n);
        for (uint32_t i = 0; i < n; ++i) tmp[i] = column[order[i]];
        std::copy(tmp.begin(), tmp.end(), column.begin() + b);
      };
      permute(ev.start_ps);
      permute(ev.duration_ps);
      permute(ev.metadata);
      permute(ev.raw);
      permute(ev.hlo_op);
      permute(ev.module);
      // The columns of device stats the line has (set on the line once sorted).
      const PlaneLookup& lookup = lookups_[line.plane - first_plane_];
      if (lookup.kernel_ids) {
        permute(ev.correlation_id);
        permute(ev.group_id);
      }
      if (line_device_clock(li)) {
        permute(ev.device_start_ps);
        permute(ev.device_duration_ps);
      }
      if (lookup.memory_ops) permute(ev.memory_op);
    }
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
  struct RawLine {
    uint32_t plane;  // index into planes_
    std::string_view bytes;
  };
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

}  // namespace

void import_xspace(Profile& profile, std::shared_ptr<Buffer> buffer, const std::string& host,
                   const ImportOptions& options) {
  const Buffer& b = *buffer;
  auto importer = std::make_unique<XSpaceImporter>(std::move(buffer), options);
  naming_file(b, [&] {
    importer->prepare();
    uint64_t total = profile.events.size() + importer->event_count();
    if (total < std::numeric_limits<uint32_t>::max()) profile.events.reserve(total);
    importer->commit(profile, host);
  });
  profile.sources.push_back(std::move(importer));
}

void import_xspace_files(Profile& profile, const std::vector<HostFile>& files,
                         const ImportOptions& options) {
  const size_t n = files.size();
  const unsigned threads =
      options.threads != 0 ? options.threads : std::max(1u, std::thread::hardware_concurrency());
  const unsigned workers = static_cast<unsigned>(std::min<size_t>(threads, n));
  // Each file counts its lines on its share of the threads; decoding later uses them all.
  const unsigned per_file = std::max(1u, threads / std::max(1u, workers));
  std::vector<std::unique_ptr<XSpaceImporter>> prepared(n);
  std::vector<std::exception_ptr> errors(n);
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  // Files are handed out in order: when one fails, the earlier ones are already taken and
  // finish, so the error reported is that of the first bad file, as a sequential load reports.
  auto work = [&] {
    for (size_t i; !failed.load() && (i = next.fetch_add(1)) < n;) {
      try {
        auto buffer = Buffer::open(files[i].path);
        const Buffer& b = *buffer;
        auto importer = std::make_unique<XSpaceImporter>(std::move(buffer), options);
        naming_file(b, [&] { importer->prepare(per_file); });
        prepared[i] = std::move(importer);
      } catch (...) {
        errors[i] = std::current_exception();
        failed.store(true);
      }
    }
  };
  if (workers <= 1) {
    work();
  } else {
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < workers; ++t) pool.emplace_back(work);
    for (auto& th : pool) th.join();
  }
  for (size_t i = 0; i < n; ++i)
    if (errors[i]) std::rethrow_exception(errors[i]);
  // One allocation for every file's events, not one growing copy per file.
  uint64_t total = profile.events.size();
  for (const auto& imp : prepared) total += imp->event_count();
  if (total < std::numeric_limits<uint32_t>::max()) profile.events.reserve(total);
  for (size_t i = 0; i < n; ++i) {
    XSpaceImporter& imp = *prepared[i];
    naming_file(imp.buffer(), [&] { imp.commit(profile, files[i].host); });
    profile.sources.push_back(std::move(prepared[i]));
  }
}

void index_hlo_from_metadata(Profile& profile) {
  for (uint32_t pi = 0; pi < profile.planes.size(); ++pi) {
    const Plane& plane = profile.planes[pi];
    if (plane.kind != PlaneKind::kMetadata) continue;
    for (uint32_t mi = 0; mi < profile.event_metadata.size(); ++mi) {
      const EventMetadata& m = profile.event_metadata[mi];
      if (m.plane != pi) continue;
      for (const Stat& s : profile.metadata_stats(mi)) {
        if (profile.str(s.name) != "Hlo Proto" || !s.value.is_text()) continue;
        // GPU and TPU profiles key the entry by program id; the CPU backend numbers entries
        // on its own and states the program id as a stat.
        int64_t program = m.program_id != kNoProgram ? hlo_program_key(m.program_id) : m.id;
        try {
          profile.hlo.add(s.value.str, program);
        } catch (const InputError& e) {
          profile.warnings.push_back(profile.hosts[plane.host].path + ": skipped HloProto of " +
                                     std::string(profile.str(m.name)) + ": " + e.reason());
        }
      }
    }
  }
}

void finish_import(Profile& profile) {
  if (profile.hosts.empty() || profile.finished) return;
  // Lines are decoded after this (Profile::require_lines), directly on the common clock.
  int64_t base = std::numeric_limits<int64_t>::max();
  for (const Host& h : profile.hosts) base = std::min(base, h.base_ns);
  profile.base_ns = base;
  // What every importer hands over is checked here, once, whatever the format.
  check_profile_structure(profile);
  profile.finished = true;
}

}  // namespace jaxprof
