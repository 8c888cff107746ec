#include "jaxprof/render/perfetto/proto_trace_sink.h"

#include <bit>
#include <charconv>
#include <cstdlib>
#include <optional>

#include "jaxprof/common/units.h"

namespace jaxprof {
namespace {

// Field numbers of Perfetto's trace protos (protos/perfetto/trace/...).
namespace trace {
constexpr uint32_t kPacket = 1;
}
namespace packet {
constexpr uint32_t kTimestamp = 8, kSequenceId = 10, kTrackEvent = 11, kInternedData = 12,
                   kSequenceFlags = 13, kTrackDescriptor = 60;
constexpr uint64_t kIncrementalStateCleared = 1, kNeedsIncrementalState = 2;
}  // namespace packet
namespace interned {
constexpr uint32_t kEventNames = 2, kDebugAnnotationNames = 3;  // {iid = 1, name = 2}
constexpr uint32_t kDebugAnnotationStringValues = 29;           // {iid = 1, str = 2}
}  // namespace interned
namespace descriptor {
constexpr uint32_t kUuid = 1, kName = 2, kProcess = 3, kParentUuid = 5, kCounter = 8;
constexpr uint32_t kProcessPid = 1, kProcessName = 6;
constexpr uint32_t kCounterUnit = 3;
constexpr uint64_t kUnitSizeBytes = 3;
}  // namespace descriptor
namespace event {
constexpr uint32_t kDebugAnnotations = 4, kType = 9, kNameIid = 10, kTrackUuid = 11,
                   kCounterValue = 30, kDoubleCounterValue = 44, kFlowIds = 47,
                   kTerminatingFlowIds = 48;
constexpr uint64_t kSliceBegin = 1, kSliceEnd = 2, kInstant = 3, kCounter = 4;
}  // namespace event
namespace annotation {
constexpr uint32_t kNameIid = 1, kBool = 2, kUint = 3, kInt = 4, kDouble = 5, kString = 6,
                   kLegacyJson = 9, kStringIid = 17;
}

constexpr uint32_t kSequence = 1;

// String arg values are interned (an op's path, source line and module repeat on every run of
// it: 58% of the bytes of a TPU capture's trace were such strings) up to this many distinct
// values; later new ones are written in place, so that memory stays bounded.
constexpr size_t kMaxInternedValues = size_t{1} << 20;

void put_utf8(uint32_t c, std::string& out) {
  if (c < 0x80) {
    out += static_cast<char>(c);
  } else if (c < 0x800) {
    out += static_cast<char>(0xC0 | (c >> 6));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    out += static_cast<char>(0xE0 | (c >> 12));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (c >> 18));
    out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  }
}

uint32_t hex4(std::string_view s, size_t i) {
  return i + 4 <= s.size()
             ? static_cast<uint32_t>(std::strtoul(std::string(s.substr(i, 4)).c_str(), nullptr, 16))
             : 0xFFFD;
}

// The text of a JSON string literal (as json_string writes them: quotes, backslash escapes).
std::string json_unquote(std::string_view s) {
  std::string out;
  for (size_t i = 1; i + 1 < s.size(); ++i) {
    if (s[i] != '\\' || i + 2 >= s.size()) {
      out += s[i];
      continue;
    }
    char c = s[++i];
    switch (c) {
      case 'n':
        out += '\n';
        break;
      case 't':
        out += '\t';
        break;
      case 'r':
        out += '\r';
        break;
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'u': {
        uint32_t u = hex4(s, i + 1);
        i += 4;
        if (u >= 0xD800 && u < 0xDC00 && i + 6 < s.size() && s[i + 1] == '\\' && s[i + 2] == 'u') {
          uint32_t lo = hex4(s, i + 3);
          if (lo >= 0xDC00 && lo < 0xE000) {
            u = 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00);
            i += 6;
          }
        }
        put_utf8(u, out);
        break;
      }
      default:
        out += c;  // \" \\ \/
    }
  }
  return out;
}

// The number `text` spells, all of it, without a copy (the values are the writer's own numbers:
// every int arg of every event went through strtoull, 3% of the export); false for anything
// else, which the callers parse as before.
template <typename T>
bool parse_whole(std::string_view text, T& value) {
  const char* end = text.data() + text.size();
  auto [at, ec] = std::from_chars(text.data(), end, value);
  return ec == std::errc() && at == end;
}

}  // namespace

bool json_to_annotation(std::string_view json, wire::Writer& a) {
  if (json == "null" || json.empty()) return false;
  if (json == "true" || json == "false") {
    a.boolean(annotation::kBool, json == "true");
  } else if (json.front() == '"') {
    a.bytes(annotation::kString, json_unquote(json));
  } else if (json.front() == '{' || json.front() == '[') {
    a.bytes(annotation::kLegacyJson, json);
  } else if (json.find_first_of(".eEnN") != std::string_view::npos) {
    double d;
    if (!parse_whole(json, d)) d = std::strtod(std::string(json).c_str(), nullptr);
    a.fixed64(annotation::kDouble, std::bit_cast<uint64_t>(d));
  } else if (json.front() == '-') {
    int64_t i;
    if (!parse_whole(json, i)) i = std::strtoll(std::string(json).c_str(), nullptr, 10);
    a.int64(annotation::kInt, i);
  } else {
    uint64_t u;
    if (!parse_whole(json, u)) u = std::strtoull(std::string(json).c_str(), nullptr, 10);
    if (u > static_cast<uint64_t>(INT64_MAX))
      a.varint(annotation::kUint, u);
    else
      a.int64(annotation::kInt, static_cast<int64_t>(u));
  }
  return true;
}

ProtoTraceSink::ProtoTraceSink(const std::function<void(std::string_view)>& sink, bool compress)
    : sink_(sink) {
  if (compress) compressor_ = std::make_unique<PacketCompressor>(sink);
}

ProtoTraceSink::~ProtoTraceSink() {
  try {
    flush();
  } catch (...) {  // end() reports a failed write; a sink dropped early has nothing to say
  }
}

void ProtoTraceSink::flush() {
  if (!buf_.empty()) {
    if (compressor_)
      compressor_->add(buf_);
    else
      sink_(buf_);
  }
  buf_.clear();
}

uint64_t ProtoTraceSink::track_uuid(int pid, int tid, size_t lane) {
  return uuids_.try_emplace(TrackKey{pid, tid, lane}, uuids_.size() + 1).first->second;
}

uint64_t ProtoTraceSink::ns(int64_t ps) const {
  int64_t q = ps / 1000;
  if (ps % 1000 < 0) --q;  // rounded down, also before the base
  return static_cast<uint64_t>(base_ns_ + q);
}

void ProtoTraceSink::packet(wire::Writer& body) {
  body.varint(packet::kSequenceId, kSequence);
  if (!cleared_) {
    body.varint(packet::kSequenceFlags, packet::kIncrementalStateCleared);
    cleared_ = true;
  } else {
    body.varint(packet::kSequenceFlags, packet::kNeedsIncrementalState);
  }
  wire::Writer::append_message(buf_, trace::kPacket, body);
  if (buf_.size() >= (1u << 20)) flush();
}

void ProtoTraceSink::descriptor(uint64_t uuid, uint64_t parent, std::string_view name, int pid,
                                Counter counter, std::string_view process_name) {
  wire::Writer d;
  d.varint(descriptor::kUuid, uuid);
  if (parent) d.varint(descriptor::kParentUuid, parent);
  if (!name.empty()) d.bytes(descriptor::kName, name);
  if (!process_name.empty()) {
    wire::Writer p;
    p.int64(descriptor::kProcessPid, pid + 1);  // pid 0 is the kernel's in Perfetto
    p.bytes(descriptor::kProcessName, process_name);
    d.message(descriptor::kProcess, p);
  }
  if (counter != Counter::kNone) {
    wire::Writer c;
    if (counter == Counter::kBytes) c.varint(descriptor::kCounterUnit, descriptor::kUnitSizeBytes);
    d.message(descriptor::kCounter, c);
  }
  wire::Writer body;
  body.message(packet::kTrackDescriptor, d);
  packet(body);
}

template <typename Text>
uint64_t ProtoTraceSink::intern(InternTable& table, uint32_t field, std::string_view key,
                                wire::Writer& interned, const Text& text) {
  if (auto it = table.find(key); it != table.end()) return it->second;
  const uint64_t id = table.size() + 1;
  table.emplace(std::string(key), id);
  wire::Writer entry;
  entry.varint(1, id);
  entry.bytes(2, text());
  interned.message(field, entry);
  return id;
}

uint64_t ProtoTraceSink::intern(InternTable& table, uint32_t field, std::string_view name,
                                wire::Writer& interned) {
  return intern(table, field, name, interned, [name] { return name; });
}

void ProtoTraceSink::begin(int64_t base_ns) {
  base_ns_ = base_ns;
  descriptor(track_uuid(0, -1), 0, {}, 0, Counter::kNone, "jaxprof");
}

void ProtoTraceSink::process(int pid, std::string_view name, std::string_view host) {
  std::string label(name);
  if (!host.empty()) label += " (" + std::string(host) + ")";
  descriptor(track_uuid(pid, -1), 0, {}, pid, Counter::kNone, label);
}

void ProtoTraceSink::thread(int pid, int tid, std::string_view name, bool) {
  tracks_[{pid, tid}] = Track{std::string(name), {}, 1};
  descriptor(track_uuid(pid, tid), track_uuid(pid, -1), name, pid, Counter::kNone);
}

void ProtoTraceSink::counter_track(int pid, int tid, std::string_view name,
                                   std::string_view series) {
  descriptor(track_uuid(pid, tid), track_uuid(pid, -1),
             std::string(name) + " " + std::string(series), pid,
             series == "bytes" ? Counter::kBytes : Counter::kPlain);
}

size_t ProtoTraceSink::lane_of(Track& t, int64_t start_ps, int64_t end_ps) {
  for (size_t k = 0;; ++k) {
    if (k == t.open.size()) t.open.emplace_back();
    std::vector<int64_t>& open = t.open[k];
    while (!open.empty() && open.back() <= start_ps) open.pop_back();
    if (open.empty() || end_ps <= open.back()) {
      open.push_back(end_ps);
      return k;
    }
  }
}

void ProtoTraceSink::annotations(const TraceArgs& args, wire::Writer& event,
                                 wire::Writer& interned) {
  wire::Writer& a = annotation_;
  for (const auto& [key, json] : args.members()) {
    a.clear();
    a.varint(annotation::kNameIid,
             intern(annotation_names_, interned::kDebugAnnotationNames, key, interned));
    if (json.size() >= 2 && json.front() == '"') {
      // Keyed by the JSON literal: decoded only when new (decoding every value took 10% of
      // the export of the 80 MB TPU profile).
      if (string_values_.size() < kMaxInternedValues || string_values_.count(json))
        a.varint(annotation::kStringIid,
                 intern(string_values_, interned::kDebugAnnotationStringValues, json, interned,
                        [literal = json] { return json_unquote(literal); }));
      else
        a.bytes(annotation::kString, json_unquote(json));
      event.message(event::kDebugAnnotations, a);
      continue;
    }
    if (json_to_annotation(json, a)) event.message(event::kDebugAnnotations, a);
  }
}

void ProtoTraceSink::slice(int pid, int tid, std::string_view name, std::string_view,
                           int64_t start_ps, int64_t duration_ps, const TraceArgs* args,
                           SliceFlow flow) {
  Track& t = tracks_[{pid, tid}];
  size_t lane = lane_of(t, start_ps, start_ps + duration_ps);
  uint64_t uuid = track_uuid(pid, tid, lane);
  for (; t.described <= lane; ++t.described)
    descriptor(track_uuid(pid, tid, t.described), track_uuid(pid, -1), t.name + " (overlapping)",
               pid, Counter::kNone);
  // Writers kept across slices: cleared, not freed (allocations were a tenth of the export).
  wire::Writer &interned = interned_, &ev = event_, &body = body_;
  interned.clear(), ev.clear(), body.clear();
  ev.varint(event::kType, event::kSliceBegin);
  ev.varint(event::kTrackUuid, uuid);
  ev.varint(event::kNameIid, intern(event_names_, interned::kEventNames, name, interned));
  if (args) annotations(*args, ev, interned);
  if (flow.out) ev.fixed64(event::kFlowIds, flow.out);
  if (flow.arrival_out) ev.fixed64(event::kFlowIds, flow.arrival_out);
  if (flow.in) ev.fixed64(event::kTerminatingFlowIds, flow.in);
  if (flow.arrival_in) ev.fixed64(event::kTerminatingFlowIds, flow.arrival_in);
  body.varint(packet::kTimestamp, ns(start_ps));
  body.message(packet::kTrackEvent, ev);
  if (!interned.str().empty()) body.message(packet::kInternedData, interned);
  packet(body);
  // The end right away: Perfetto sorts a trace's events by time before nesting them.
  ev.clear(), body.clear();
  ev.varint(event::kType, event::kSliceEnd);
  ev.varint(event::kTrackUuid, uuid);
  body.varint(packet::kTimestamp, ns(start_ps + duration_ps));
  body.message(packet::kTrackEvent, ev);
  packet(body);
}

void ProtoTraceSink::counter(int pid, int tid, int64_t time_ps, double value) {
  wire::Writer ev;
  ev.varint(event::kType, event::kCounter);
  ev.varint(event::kTrackUuid, track_uuid(pid, tid));
  if (const std::optional<int64_t> whole = whole_number(value))
    ev.int64(event::kCounterValue, *whole);
  else
    ev.fixed64(event::kDoubleCounterValue, std::bit_cast<uint64_t>(value));
  wire::Writer body;
  body.varint(packet::kTimestamp, ns(time_ps));
  body.message(packet::kTrackEvent, ev);
  packet(body);
}

void ProtoTraceSink::end(const std::vector<std::string>& notes) {
  if (!notes.empty()) {
    // What was left out, as an instant on jaxprof's own process with one arg per note.
    wire::Writer interned, ev;
    ev.varint(event::kType, event::kInstant);
    ev.varint(event::kTrackUuid, track_uuid(0, -1));
    ev.varint(event::kNameIid,
              intern(event_names_, interned::kEventNames, "jaxprof notes", interned));
    for (size_t i = 0; i < notes.size(); ++i) {
      wire::Writer a;
      a.varint(annotation::kNameIid, intern(annotation_names_, interned::kDebugAnnotationNames,
                                            "note " + std::to_string(i + 1), interned));
      a.bytes(annotation::kString, notes[i]);
      ev.message(event::kDebugAnnotations, a);
    }
    wire::Writer body;
    body.varint(packet::kTimestamp, ns(0));
    body.message(packet::kTrackEvent, ev);
    if (!interned.str().empty()) body.message(packet::kInternedData, interned);
    packet(body);
  }
  flush();
  if (compressor_) compressor_->finish();
}

}  // namespace jaxprof
