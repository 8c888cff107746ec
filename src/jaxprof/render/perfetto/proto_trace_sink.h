// The exported timeline in Perfetto's own protobuf format (a `Trace` of `TracePacket`s carrying
// `TrackDescriptor`s and `TrackEvent`s, perfetto/protos/perfetto/trace/), which Perfetto's UI
// opens at a fraction of the JSON's size and memory: names, arg keys and string arg values are
// interned, packets stream out one at a time on one packet sequence. Perfetto's clock is in
// nanoseconds: times are the profile's picoseconds rounded down to them. The packets are deflated
// a batch at a time into `compressed_packets` (packet_compressor.h) unless told not to. A slice
// that overlaps
// another on its track without nesting inside it (Perfetto nests slices by time) goes to a sibling
// track, "<track> (overlapping)".
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "jaxprof/render/perfetto/packet_compressor.h"
#include "jaxprof/render/perfetto/trace_sink.h"
#include "jaxprof/wire/writer.h"

namespace jaxprof {

class ProtoTraceSink : public TraceSink {
 public:
  // `compress`: deflate the packets (a file gzipped as a whole gains nothing from it).
  explicit ProtoTraceSink(const std::function<void(std::string_view)>& sink, bool compress = true);
  ~ProtoTraceSink() override;

  void begin(int64_t base_ns) override;
  void hlo_proto(std::string_view, std::string_view, bool, std::string_view) override {}
  void process(int pid, std::string_view name, std::string_view host) override;
  void thread(int pid, int tid, std::string_view name, bool derived) override;
  void counter_track(int pid, int tid, std::string_view name, std::string_view series) override;
  void slice(int pid, int tid, std::string_view name, std::string_view name_json, int64_t start_ps,
             int64_t duration_ps, const TraceArgs* args, SliceFlow flow) override;
  void counter(int pid, int tid, int64_t time_ps, double value) override;
  void end(const std::vector<std::string>& notes) override;

 private:
  // A track's uuid (tid -1: the process's own), numbered in the order tracks are first met:
  // small numbers take one or two bytes in each of the two packets of every slice.
  uint64_t track_uuid(int pid, int tid, size_t lane = 0);

  struct Track {
    std::string name;
    // Per lane: the ends of the slices open at the last start, innermost last.
    std::vector<std::vector<int64_t>> open;
    size_t described = 1;  // lanes with a descriptor (lane 0 is the track itself)
  };
  // Packet fields shared by every packet (the sequence), then the body.
  void packet(wire::Writer& body);
  // What a track is: slices, or a counter (of bytes: memory in use; or of anything else).
  enum class Counter : uint8_t { kNone, kPlain, kBytes };
  void descriptor(uint64_t uuid, uint64_t parent, std::string_view name, int pid, Counter counter,
                  std::string_view process_name = {});
  uint64_t ns(int64_t ps) const;
  // Looked up by string_view, without making a string (the tables are hit several times per
  // slice).
  struct StringHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>()(s); }
  };
  using InternTable = std::unordered_map<std::string, uint64_t, StringHash, std::equal_to<>>;
  // The interned id of a name in one of the interned tables, adding it to `interned` (the
  // packet's InternedData) when new.
  uint64_t intern(InternTable& table, uint32_t field, std::string_view name,
                  wire::Writer& interned);
  // The same keyed by `key`, the entry's text made by text() when new (a JSON literal decoded).
  template <typename Text>
  uint64_t intern(InternTable& table, uint32_t field, std::string_view key, wire::Writer& interned,
                  const Text& text);
  size_t lane_of(Track& t, int64_t start_ps, int64_t end_ps);
  void annotations(const TraceArgs& args, wire::Writer& event, wire::Writer& interned);
  void flush();

  const std::function<void(std::string_view)>& sink_;
  std::unique_ptr<PacketCompressor> compressor_;
  std::string buf_;
  int64_t base_ns_ = 0;
  bool cleared_ = false;  // the first packet clears the sequence's incremental state
  InternTable event_names_, annotation_names_;
  // String arg values by their JSON literal (decoded only when first met).
  InternTable string_values_;
  struct TrackKey {
    int pid, tid;
    size_t lane;
    bool operator==(const TrackKey&) const = default;
  };
  struct TrackKeyHash {
    size_t operator()(const TrackKey& k) const {
      return std::hash<uint64_t>()((static_cast<uint64_t>(static_cast<uint32_t>(k.pid)) << 32) |
                                   static_cast<uint32_t>(k.tid)) ^
             (k.lane * 0x9E3779B97F4A7C15ull);
    }
  };
  std::unordered_map<TrackKey, uint64_t, TrackKeyHash> uuids_;
  std::map<std::pair<int, int>, Track> tracks_;
  wire::Writer interned_, event_, body_, annotation_;  // reused by slice() and annotations()
};

// The value of a JSON text as a DebugAnnotation's value field (bool, int, uint, double, string,
// or legacy JSON for objects and arrays); false for null (no value).
bool json_to_annotation(std::string_view json, wire::Writer& annotation);

}  // namespace jaxprof
