#include "jaxprof/model/profile.h"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "jaxprof/wire/reader.h"

namespace jaxprof {

const char* plane_kind_name(PlaneKind k) {
  switch (k) {
    case PlaneKind::kHostCpu:
      return "host-cpu";
    case PlaneKind::kGpu:
      return "gpu";
    case PlaneKind::kTpu:
      return "tpu";
    case PlaneKind::kOtherDevice:
      return "device";
    case PlaneKind::kMetadata:
      return "metadata";
    case PlaneKind::kOther:
      return "other";
  }
  return "?";
}

PlaneKind classify_plane(std::string_view name) {
  if (name == "/host:CPU") return PlaneKind::kHostCpu;
  if (name == "/host:metadata") return PlaneKind::kMetadata;
  if (name.starts_with("/device:GPU:")) return PlaneKind::kGpu;
  if (name.starts_with("/device:TPU:")) return PlaneKind::kTpu;
  if (name.starts_with("/device:")) return PlaneKind::kOtherDevice;
  return PlaneKind::kOther;
}

void Events::resize(size_t n, bool uninitialised) {
  start_ps.resize(n, !uninitialised);
  duration_ps.resize(n, !uninitialised);
  metadata.resize(n, !uninitialised);
  raw.resize(n, !uninitialised);
  hlo_op.resize(n, !uninitialised);
  module.resize(n, !uninitialised);
}

Profile::Profile() {
  modules.push_back(ModuleKey{});
  // Entry 0 stands for events whose metadata id is missing from their plane.
  EventMetadata& unknown = event_metadata.emplace_back();
  unknown.name = strings.intern_view("(unknown event)");
}

std::string_view Profile::event_display_name(uint32_t e) const {
  const EventMetadata& m = event_metadata[events.metadata[e]];
  return strings[m.display_name != 0 ? m.display_name : m.name];
}

Stat decode_stat(std::string_view bytes, const std::unordered_map<int64_t, StringId>& stat_names,
                 const StringTable& strings, const uint8_t* origin) {
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
        s.name = name_of(f.as_int64());
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

std::vector<Stat> Profile::event_stats(uint32_t plane, uint32_t e) const {
  const Plane& p = planes[plane];
  const uint8_t* origin = buffers[p.buffer]->data();
  const uint8_t* at = reinterpret_cast<const uint8_t*>(p.bytes.data()) + events.raw[e];
  const uint8_t* end = reinterpret_cast<const uint8_t*>(p.bytes.data() + p.bytes.size());
  uint64_t len = wire::read_varint(at, end, origin);
  std::vector<Stat> out;
  wire::Reader r(std::string_view(reinterpret_cast<const char*>(at), len), origin);
  wire::Field f;
  while (r.next(f)) {
    if (f.number == 4 && f.type == wire::WireType::kLen)
      out.push_back(decode_stat(f.bytes, p.stat_names, strings, origin));
  }
  return out;
}

std::vector<Stat> Profile::metadata_stats(uint32_t metadata) const {
  const EventMetadata& m = event_metadata[metadata];
  const Plane& p = planes[m.plane];
  const uint8_t* origin = buffers[p.buffer]->data();
  std::vector<Stat> out;
  wire::Reader r(m.bytes, origin);
  wire::Field f;
  while (r.next(f)) {
    if (f.number == 5 && f.type == wire::WireType::kLen)
      out.push_back(decode_stat(f.bytes, p.stat_names, strings, origin));
  }
  return out;
}

std::optional<StatValue> Profile::event_stat(uint32_t plane, uint32_t e,
                                             std::string_view name) const {
  for (const Stat& s : event_stats(plane, e))
    if (strings[s.name] == name) return s.value;
  for (const Stat& s : metadata_stats(events.metadata[e]))
    if (strings[s.name] == name) return s.value;
  return std::nullopt;
}

std::optional<StatValue> Profile::plane_stat(uint32_t plane, std::string_view name) const {
  for (const Stat& s : planes[plane].stats)
    if (strings[s.name] == name) return s.value;
  return std::nullopt;
}

void Profile::require_lines(const std::vector<uint32_t>& wanted) const {
  std::vector<std::vector<uint32_t>> by_source(line_sources.size());
  bool any = false;
  for (uint32_t li : wanted) {
    const Line& line = lines[li];
    if (line.decoded) continue;
    by_source[line.source].push_back(li);
    any = true;
  }
  if (!any) return;
  if (!finished) throw std::logic_error("require_lines before finish_import");
  auto& self = const_cast<Profile&>(*this);
  for (size_t s = 0; s < by_source.size(); ++s) {
    if (by_source[s].empty()) continue;
    std::sort(by_source[s].begin(), by_source[s].end());
    by_source[s].erase(std::unique(by_source[s].begin(), by_source[s].end()), by_source[s].end());
    self.line_sources[s]->decode(self, by_source[s]);
  }
}

void Profile::require_all_lines() const {
  std::vector<uint32_t> all;
  for (uint32_t li = 0; li < lines.size(); ++li)
    if (!lines[li].decoded) all.push_back(li);
  require_lines(all);
}

uint32_t Profile::intern_module(ModuleKey key) {
  if (key.name == 0 && key.program_id == kNoProgram) return 0;
  if (key.name == 0) {
    // Some events carry only a program id (TPU ops): the HLO index knows its module name.
    if (const HloModule* mod = hlo.find(hlo_program_key(key.program_id), {}))
      key.name = strings.intern_view(mod->name);
  }
  auto [it, inserted] = module_index_.try_emplace(key, static_cast<uint32_t>(modules.size()));
  if (inserted) modules.push_back(key);
  return it->second;
}

std::string Profile::module_label(uint32_t module) const {
  const ModuleKey& k = modules[module];
  if (module == 0) return "";
  if (k.program_id == kNoProgram) return std::string(strings[k.name]);
  return fmt::format("{}({})", strings[k.name], k.program_id);
}

}  // namespace jaxprof
