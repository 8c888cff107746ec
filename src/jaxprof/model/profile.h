// The one in-memory model every importer fills and every analysis reads.
//
// Layout is columnar: events of all planes live in one set of parallel arrays, each line owning a
// contiguous range sorted by (start, longest first). Times are integer picoseconds relative to
// the profile's earliest line timestamp (`base_ns`), which keeps int64 exact for days of data.
// The few stats every analysis needs (hlo_op, module) are resolved into columns at import; the
// rest are decoded on demand from the original bytes (`event_stats`).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "jaxprof/io/buffer.h"
#include "jaxprof/model/column.h"
#include "jaxprof/model/hlo_index.h"
#include "jaxprof/model/stat.h"
#include "jaxprof/model/string_table.h"

namespace jaxprof {

enum class PlaneKind : uint8_t {
  kHostCpu,      // /host:CPU (host threads; XLA ops on the CPU backend)
  kGpu,          // /device:GPU:N
  kTpu,          // /device:TPU:N
  kOtherDevice,  // /device:CUSTOM:..., other accelerators
  kMetadata,     // /host:metadata (HloProtos)
  kOther,        // Task Environment and anything else
};

// XLA program ids are unsigned 64-bit (TPU ids use the top bit); this marks "none".
using ProgramId = uint64_t;
inline constexpr ProgramId kNoProgram = UINT64_MAX;
// For HloIndex lookups, which key by int64 with -1 for unknown.
inline int64_t hlo_program_key(ProgramId id) {
  return id == kNoProgram ? -1 : static_cast<int64_t>(id);
}

const char* plane_kind_name(PlaneKind k);
PlaneKind classify_plane(std::string_view name);
// GPU, TPU and other accelerator planes: the ones whose events are device ops.
inline bool is_device_plane(PlaneKind k) {
  return k == PlaneKind::kGpu || k == PlaneKind::kTpu || k == PlaneKind::kOtherDevice;
}

// XProf's custom planes ("/device:CUSTOM:Megascale Trace", the DCN transfers of a multi-slice
// run): device planes by name, but no chip's work and no device memory of their own.
inline bool is_custom_device_plane(std::string_view name) {
  return name.starts_with("/device:CUSTOM:");
}

struct Host {
  std::string name;
  std::string path;     // the file it was read from
  int64_t base_ns = 0;  // the earliest line timestamp of this host's file
  // The machines the file says it was captured on (XSpace hostnames), when it says.
  std::vector<std::string> captured_on;
};

struct Plane {
  StringId name = 0;
  int64_t id = 0;
  uint32_t host = 0;
  uint32_t buffer = 0;     // index into Profile::buffers
  uint32_t source = 0;     // index into Profile::sources: the importer that reads its stats
  std::string_view bytes;  // the serialized XPlane, inside that buffer
  PlaneKind kind = PlaneKind::kOther;
  std::vector<Stat> stats;  // plane stats (device capabilities), refs resolved
  std::unordered_map<int64_t, StringId> stat_names;  // stat metadata id -> name
  std::vector<uint32_t> lines;                       // indices into Profile::lines
  bool metadata_memory_ops = false;  // some event metadata carries memcpy/memset_details
};

struct Line {
  uint32_t plane = 0;
  // Events are decoded on first use (Profile::require_lines): until then `event_count` is known
  // but the event columns in [first_event, first_event + event_count) are not filled.
  bool decoded = true;
  uint32_t source = 0;  // index into Profile::sources: who decodes it
  int64_t id = 0;
  StringId name = 0;
  StringId display_name = 0;
  int64_t timestamp_ns = 0;
  uint32_t first_event = 0;  // range in Profile::events
  uint32_t event_count = 0;
  // The event metadata ids (the file's ids, modulo the bit count) met on the line, when the
  // importer noted them while counting events: an analysis looking for a few kinds of event can
  // skip decoding the lines that hold none of them. Empty: unknown, the line may hold anything.
  std::vector<uint64_t> metadata_bits;
  // Whether the events' correlation_id and group_id columns were filled when they were decoded.
  bool kernel_ids = false;
  // Whether the events' device clock columns (device_start_ps, device_duration_ps) and their
  // memory_op column were filled when they were decoded.
  bool device_clock = false;
  bool memory_ops = false;
};
inline constexpr uint32_t kLineMetadataBits = 4096;

struct EventMetadata {
  uint32_t plane = 0;
  int64_t id = 0;
  StringId name = 0;
  StringId display_name = 0;
  std::string_view bytes;  // the serialized XEventMetadata (for its stats)
  StringId hlo_op = 0;     // from its hlo_op stat, or the "%name = ..." HLO text form
  StringId hlo_module = 0;
  ProgramId program_id = kNoProgram;
  // Events::kMemcpyStat / kMemsetStat when its stats carry memcpy_details / memset_details.
  uint8_t memory_op = 0;
};

// An XLA module as events name it: module name plus program id.
struct ModuleKey {
  StringId name = 0;
  ProgramId program_id = kNoProgram;
  bool operator==(const ModuleKey&) const = default;
};

struct Events {
  Column<int64_t> start_ps;
  Column<int64_t> duration_ps;
  Column<uint32_t> metadata;  // index into Profile::event_metadata
  // Offset in the plane bytes of the XEvent's length prefix (raw_offset): its low 32 bits, and
  // its high ones in raw_high only when a plane passes 4 GiB (`wide`), so that the column costs
  // 4 bytes an event everywhere else. Importers whose events are records of their own (nsys-jax,
  // Chrome traces) keep an index in `raw`.
  Column<uint32_t> raw;
  Column<uint32_t> raw_high;
  bool wide = false;
  Column<StringId> hlo_op;  // 0 = none
  Column<uint32_t> module;  // index into Profile::modules, 0 = none
  // The event's own correlation_id and group_id stats, for the analyses that read them for every
  // GPU kernel: filled where the line's `kernel_ids` says so, kNoStat where the event has none of
  // its own, kStatInFile where it is not a plain integer (read the event's stats then).
  Column<int64_t> correlation_id;
  Column<int64_t> group_id;
  static constexpr int64_t kNoStat = INT64_MIN;
  static constexpr int64_t kStatInFile = INT64_MIN + 1;
  // The op's timing on the device's own clock (the device_offset_ps and device_duration_ps stats
  // TPU op events carry beside the host-aligned offset and duration): filled where the line's
  // `device_clock` says so, kNoStat where the event lacks either. The offset is on the device's
  // clock, comparable only with other events of the same device; see docs/clocks.md.
  Column<int64_t> device_start_ps;
  Column<int64_t> device_duration_ps;
  // What the event's own stats say it is (memcpy_details, memset_details): filled where the line's
  // `memory_ops` says so (analysis/ops/memory_op.h reads it).
  Column<uint8_t> memory_op;
  static constexpr uint8_t kMemcpyStat = 1, kMemsetStat = 2;

  size_t size() const { return start_ps.size(); }
  int64_t end_ps(size_t e) const { return start_ps[e] + duration_ps[e]; }
  uint64_t raw_offset(size_t e) const {
    return wide ? uint64_t{raw[e]} | uint64_t{raw_high[e]} << 32 : raw[e];
  }
  // The op's own duration: on the device's clock when the event carries it (its line's
  // `device_clock` is set and the event has both stats), else the timeline duration.
  int64_t op_duration_ps(const Line& line, size_t e) const {
    return line.device_clock && device_duration_ps[e] != kNoStat ? device_duration_ps[e]
                                                                 : duration_ps[e];
  }
  // Whether the event's op duration comes from the device clock.
  bool on_device_clock(const Line& line, size_t e) const {
    return line.device_clock && device_duration_ps[e] != kNoStat;
  }
  // From now on keep raw_high too (a plane of 4 GiB or more is coming); events so far get 0.
  void make_wide();
  // New events are zero unless `uninitialised` (for importers that write every slot).
  void resize(size_t n, bool uninitialised = false);
  // Room for n events, so that importers adding several files grow the columns once.
  void reserve(size_t n);
};

class Profile;

// An event as Profile::scan_line yields it: its time, its metadata, and where to read its stats.
struct ScannedEvent {
  static constexpr uint32_t kNotDecoded = UINT32_MAX;
  int64_t start_ps = 0;
  int64_t duration_ps = 0;
  uint32_t metadata = 0;         // index into Profile::event_metadata
  uint32_t event = kNotDecoded;  // index into Profile::events when the line is decoded
  uint64_t raw = 0;              // offset of the XEvent in its plane bytes (not decoded)
};

// What Profile::visit_line hands over per event: the event, and its own first stat of each name
// asked for (unset where it has none; its metadata's stats are not looked at).
using LineVisitor =
    std::function<void(const ScannedEvent& event, std::span<const std::optional<StatValue>> own)>;

// Reads the same few stats of many events of one plane, the events' own only (as
// Profile::find_own_event_stats), with the names resolved once: for analyses that read a stat or
// two of hundreds of thousands of events.
class StatReader {
 public:
  virtual ~StatReader() = default;
  // Sets out[i] (reset first) to the event's own first stat of the reader's i-th name.
  virtual void read(const ScannedEvent& event, std::span<std::optional<StatValue>> out) const = 0;
};

// What an importer leaves with the Profile for each file it read: it decodes lines on demand, so a
// command only pays for the lines it reads (`ops` on a GPU profile never decodes the host
// threads), and it reads the stats of events and event metadata, which stay in the file.
class EventSource {
 public:
  virtual ~EventSource() = default;
  // Fills the event columns of `lines` (all from this source, not yet decoded), sorts each line
  // and marks it decoded. Throws InputError for corrupt bytes.
  virtual void decode_lines(Profile& profile, const std::vector<uint32_t>& lines) = 0;
  // The event's own stats (refs resolved). The event's line must be decoded.
  virtual std::vector<Stat> event_stats(const Profile& profile, uint32_t plane,
                                        uint32_t event) const = 0;
  virtual std::vector<Stat> metadata_stats(const Profile& profile, uint32_t metadata) const = 0;
  // Sets out[i] to the event's own stat named names[i], when it has one. Sources override this
  // when they can do better than scanning event_stats().
  virtual void find_event_stats(const Profile& profile, uint32_t plane, uint32_t event,
                                std::span<const StringId> names,
                                std::span<std::optional<StatValue>> out) const;
  // Appends the events of `line` (not decoded) whose metadata is marked in `want` (one flag per
  // Profile::event_metadata entry), in line order, without filling the event columns; false
  // when the source cannot (the line is decoded then).
  virtual bool scan_line(const Profile& profile, uint32_t line, std::span<const uint8_t> want,
                         std::vector<ScannedEvent>& out) const;
  // Calls visit for each event of `line` (not decoded) whose metadata is marked in `want`, in file
  // order, with its own stats named `names`, all read in one pass over the line's bytes; false
  // when the source cannot (the line is decoded then).
  virtual bool visit_line(const Profile& profile, uint32_t line, std::span<const uint8_t> want,
                          std::span<const StringId> names, const LineVisitor& visit) const;
  // Whether scan_line reads lines without decoding them (true) or gives up (false).
  virtual bool can_scan_lines() const { return false; }
  // Hands the pages of `line`'s bytes in the file back to the kernel where the source maps its
  // file (they fault in again if read again); nothing otherwise.
  virtual void release_line_bytes(const Profile& profile, uint32_t line) const;
  // find_event_stats for an event that scan_line yielded from a line not decoded.
  virtual void find_scanned_event_stats(const Profile& profile, uint32_t plane, uint64_t raw,
                                        std::span<const StringId> names,
                                        std::span<std::optional<StatValue>> out) const;
  // A StatReader for events of `plane`; the default asks find_event_stats (or
  // find_scanned_event_stats) per event.
  virtual std::unique_ptr<StatReader> stat_reader(const Profile& profile, uint32_t plane,
                                                  std::span<const StringId> names) const;
  // False when no event of the plane can carry a stat of that name (the file declares none):
  // lets an analysis rule out lines it has not read. True when the source cannot tell.
  virtual bool plane_may_have_stat(const Profile& profile, uint32_t plane,
                                   std::string_view name) const;
};

class Profile {
 public:
  Profile();
  Profile(Profile&&) = default;
  Profile& operator=(Profile&&) = default;

  std::vector<std::shared_ptr<Buffer>> buffers;
  std::vector<Host> hosts;
  std::vector<Plane> planes;
  std::vector<Line> lines;
  std::vector<EventMetadata> event_metadata;
  std::vector<ModuleKey> modules;  // [0] is "no module"
  Events events;
  StringTable strings;
  HloIndex hlo;
  int64_t base_ns = 0;  // absolute time (ns since the epoch) of start_ps == 0
  // The hosts' clocks were put on one at import (nsys-jax archives, as nsys-jax does): nothing
  // else moves them again.
  bool clocks_aligned = false;
  std::vector<std::string> errors;  // XSpace errors and warnings, with the file they came from
  std::vector<std::string> warnings;
  std::vector<std::unique_ptr<EventSource>> sources;
  bool finished = false;  // set by finish_import(): base_ns and the HLO index are final

  // Decodes whichever of `lines` are not decoded yet. Logically const: it fills a cache the
  // analyses read, so they can take `const Profile&`.
  void require_lines(const std::vector<uint32_t>& lines) const;
  void require_all_lines() const;
  // The reverse, for a reader that goes over each line once and is done with it (export): hands
  // back the decoded lines' slots in the event columns (whole pages) and their bytes in the file
  // (EventSource::release_line_bytes), and marks them not decoded, so that a later require_lines
  // decodes them again. Memory then holds the lines being read rather than every line read.
  // Only for lines nothing else reads meanwhile: what was computed from them stays valid, but
  // their slots read as zero until they are decoded again, and a memo that keeps their events'
  // indices (compile records, steps) may read them later without decoding them: drop_memos().
  void forget_lines(const std::vector<uint32_t>& lines) const;
  // Drops the input files' mapped pages from the resident set (Buffer::release): for a reader
  // about to allocate much, which would otherwise sit on top of the whole mapped file. What
  // reads the file later faults its pages back in from the page cache.
  void release_file_pages() const {
    for (const std::shared_ptr<Buffer>& b : buffers) b->release(0, b->size());
  }
  // Drops every memo, so that the next analysis that asks computes it again (and decodes what it
  // reads): after forget_lines, where no reference to a memo is held.
  void drop_memos() const {
    check_writable("drop_memos");
    memo_.clear();
  }
  // The events of one line whose metadata is marked in `want` (a flag per event_metadata entry),
  // in line order (start, longest first), into `out` (cleared first). A line not decoded yet
  // stays so when its source can pick the events out of the file directly: for analyses after
  // a few kinds of event on busy lines.
  void scan_line(uint32_t line, std::span<const uint8_t> want,
                 std::vector<ScannedEvent>& out) const;
  // scan_line and a StatReader in one pass: each event of the line whose metadata is marked in
  // `want` goes to `visit` with its own stats named `names`. The order is the file's, which need
  // not be line order: a stable sort by start, longest first, gives that. For analyses that
  // read a stat of every event they pick, where a second pass over the bytes would cost as much
  // as the first.
  void visit_line(uint32_t line, std::span<const uint8_t> want, std::span<const StringId> names,
                  const LineVisitor& visit) const;

  // The op's own duration for an event whose line is not at hand (Events::op_duration_ps):
  // on the device clock where the event carries it, else its timeline duration.
  int64_t op_duration_ps(uint32_t e) const {
    return on_device_clock(e) ? events.device_duration_ps[e] : events.duration_ps[e];
  }
  bool on_device_clock(uint32_t e) const;

  // A derived result several analyses share within one run (e.g. module executions): computed
  // by `make` on first use, then kept with the profile. Logically const, like require_lines.
  template <typename T, typename Make>
  const T& memo(const std::string& key, Make&& make) const {
    auto it = memo_.find(key);
    if (it == memo_.end()) {
      check_writable("memo");
      it = memo_.emplace(key, std::make_shared<T>(std::forward<Make>(make)())).first;
    }
    return *std::static_pointer_cast<const T>(it->second);
  }

  // A stretch where analyses read the Profile on several threads at once: until it ends,
  // require_lines and memo throw std::logic_error rather than change it. Decode what the
  // threads need before it begins.
  class ReadOnlyScope {
   public:
    explicit ReadOnlyScope(const Profile& p) : p_(p) { p_.read_only_.scopes.fetch_add(1); }
    ~ReadOnlyScope() { p_.read_only_.scopes.fetch_sub(1); }
    ReadOnlyScope(const ReadOnlyScope&) = delete;
    ReadOnlyScope& operator=(const ReadOnlyScope&) = delete;

   private:
    const Profile& p_;
  };
  // Whether lines of this line's source can be scanned without decoding them (scan_line).
  bool can_scan(uint32_t line) const { return sources[lines[line].source]->can_scan_lines(); }

  std::string_view str(StringId id) const { return strings[id]; }
  const Plane& plane_of_line(uint32_t line) const { return planes[lines[line].plane]; }

  // Event naming: the metadata name, and its display name when set (else the name).
  std::string_view event_name(uint32_t e) const {
    return strings[event_metadata[events.metadata[e]].name];
  }
  std::string_view event_display_name(uint32_t e) const;

  // The event's own stats, decoded from the file on demand (refs resolved).
  std::vector<Stat> event_stats(uint32_t plane, uint32_t e) const;
  // The stats of an event metadata entry.
  std::vector<Stat> metadata_stats(uint32_t metadata) const;
  // A stat by name: the event's own first, then its metadata's.
  std::optional<StatValue> event_stat(uint32_t plane, uint32_t e, std::string_view name) const;
  std::optional<StatValue> plane_stat(uint32_t plane, std::string_view name) const;
  // Whether events of the plane may carry a stat of this name (EventSource::plane_may_have_stat).
  bool plane_may_have_stat(uint32_t plane, std::string_view name) const {
    return sources[planes[plane].source]->plane_may_have_stat(*this, plane, name);
  }
  // Several stats of one event by interned name (the event's own, then its metadata's), without
  // decoding the others: for analyses that read a stat or two of many events. Names that are not
  // interned (StringTable::find gives UINT32_MAX) are never found.
  void find_event_stats(uint32_t plane, uint32_t e, std::span<const StringId> names,
                        std::span<std::optional<StatValue>> out) const;
  // The event's own stats only (no metadata fallback), for an event of scan_line.
  void find_own_event_stats(uint32_t plane, const ScannedEvent& e, std::span<const StringId> names,
                            std::span<std::optional<StatValue>> out) const;
  // find_own_event_stats for many events of one plane (EventSource::stat_reader).
  std::unique_ptr<StatReader> stat_reader(uint32_t plane, std::span<const StringId> names) const {
    return sources[planes[plane].source]->stat_reader(*this, plane, names);
  }

  // Where one input file's pieces go: its Host, its Buffer, and the slot in `sources` its importer
  // takes when it pushes its EventSource (importers push it after reading the file).
  struct FileSlots {
    uint32_t host, buffer, source;
  };
  FileSlots add_file(const std::string& host, std::shared_ptr<Buffer> buffer);

  // Interns a module; one known only by program id takes its name from the HLO index.
  uint32_t intern_module(ModuleKey key);
  std::string module_label(uint32_t module) const;  // "name" or "name(program_id)"

 private:
  struct ModuleKeyHash {
    size_t operator()(const ModuleKey& k) const {
      return std::hash<uint64_t>()(k.program_id) * 31 + k.name;
    }
  };
  std::unordered_map<ModuleKey, uint32_t, ModuleKeyHash> module_index_;
  void check_writable(const char* what) const;

  mutable std::unordered_map<std::string, std::shared_ptr<const void>> memo_;
  // [first, end) event ranges of decoded lines whose device clock columns are filled, sorted.
  mutable std::vector<std::pair<uint32_t, uint32_t>> device_clock_ranges_;
  struct ReadOnlyCount {  // open ReadOnlyScopes
    std::atomic<int> scopes{0};
    ReadOnlyCount() = default;
    // Profiles move only while no thread reads them.
    ReadOnlyCount(ReadOnlyCount&&) noexcept {}
    ReadOnlyCount& operator=(ReadOnlyCount&&) noexcept { return *this; }
  };
  mutable ReadOnlyCount read_only_;
};

}  // namespace jaxprof
