#include "jaxprof/model/profile.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "jaxprof/model/invariants.h"

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
  if (wide) raw_high.resize(n, !uninitialised);
  hlo_op.resize(n, !uninitialised);
  module.resize(n, !uninitialised);
  correlation_id.resize(n, !uninitialised);
  group_id.resize(n, !uninitialised);
  device_start_ps.resize(n, !uninitialised);
  device_duration_ps.resize(n, !uninitialised);
  memory_op.resize(n, !uninitialised);
}

void Events::make_wide() {
  if (wide) return;
  wide = true;
  raw_high.resize(raw.size(), /*zero=*/true);
}

void Events::reserve(size_t n) {
  start_ps.reserve(n);
  duration_ps.reserve(n);
  metadata.reserve(n);
  raw.reserve(n);
  if (wide) raw_high.reserve(n);
  hlo_op.reserve(n);
  module.reserve(n);
  correlation_id.reserve(n);
  group_id.reserve(n);
  device_start_ps.reserve(n);
  device_duration_ps.reserve(n);
  memory_op.reserve(n);
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

std::vector<Stat> Profile::event_stats(uint32_t plane, uint32_t e) const {
  return sources[planes[plane].source]->event_stats(*this, plane, e);
}

std::vector<Stat> Profile::metadata_stats(uint32_t metadata) const {
  if (metadata == 0) return {};  // the stand-in for unknown metadata ids
  return sources[planes[event_metadata[metadata].plane].source]->metadata_stats(*this, metadata);
}

void EventSource::find_event_stats(const Profile& profile, uint32_t plane, uint32_t event,
                                   std::span<const StringId> names,
                                   std::span<std::optional<StatValue>> out) const {
  for (const Stat& s : event_stats(profile, plane, event))
    for (size_t i = 0; i < names.size(); ++i)
      if (s.name == names[i] && !out[i]) out[i] = s.value;
}

bool EventSource::scan_line(const Profile&, uint32_t, std::span<const uint8_t>,
                            std::vector<ScannedEvent>&) const {
  return false;
}

void EventSource::find_scanned_event_stats(const Profile&, uint32_t, uint64_t,
                                           std::span<const StringId>,
                                           std::span<std::optional<StatValue>>) const {
  throw std::logic_error("find_scanned_event_stats: this source does not scan lines");
}

void Profile::scan_line(uint32_t li, std::span<const uint8_t> want,
                        std::vector<ScannedEvent>& out) const {
  if (want.size() != event_metadata.size())
    throw std::logic_error("scan_line: want needs one flag per event metadata entry");
  out.clear();
  const Line& line = lines[li];
  if (!line.decoded) {
    if (!finished) throw std::logic_error("scan_line before finish_import");
    if (sources[line.source]->scan_line(*this, li, want, out)) {
      check_scanned_events(*this, li, out);
      return;
    }
    out.clear();
    require_lines({li});
  }
  for (uint32_t e = line.first_event; e < line.first_event + line.event_count; ++e)
    if (want[events.metadata[e]])
      out.push_back(
          {events.start_ps[e], events.duration_ps[e], events.metadata[e], e, events.raw_offset(e)});
}

bool EventSource::visit_line(const Profile&, uint32_t, std::span<const uint8_t>,
                             std::span<const StringId>, const LineVisitor&) const {
  return false;
}

void Profile::visit_line(uint32_t li, std::span<const uint8_t> want,
                         std::span<const StringId> names, const LineVisitor& visit) const {
  if (want.size() != event_metadata.size())
    throw std::logic_error("visit_line: want needs one flag per event metadata entry");
  const Line& line = lines[li];
  if (!line.decoded) {
    if (!finished) throw std::logic_error("visit_line before finish_import");
    if (sources[line.source]->visit_line(*this, li, want, names, visit)) return;
    require_lines({li});
  }
  std::unique_ptr<StatReader> reader = stat_reader(line.plane, names);
  std::vector<std::optional<StatValue>> own(names.size());
  for (uint32_t e = line.first_event; e < line.first_event + line.event_count; ++e) {
    if (!want[events.metadata[e]]) continue;
    ScannedEvent scanned{events.start_ps[e], events.duration_ps[e], events.metadata[e], e,
                         events.raw_offset(e)};
    reader->read(scanned, own);
    visit(scanned, own);
  }
}

void Profile::find_own_event_stats(uint32_t plane, const ScannedEvent& e,
                                   std::span<const StringId> names,
                                   std::span<std::optional<StatValue>> out) const {
  for (auto& o : out) o.reset();
  const EventSource& source = *sources[planes[plane].source];
  if (e.event != ScannedEvent::kNotDecoded)
    source.find_event_stats(*this, plane, e.event, names, out);
  else
    source.find_scanned_event_stats(*this, plane, e.raw, names, out);
}

namespace {

class StatReaderByEvent final : public StatReader {
 public:
  StatReaderByEvent(const Profile& profile, uint32_t plane, std::span<const StringId> names)
      : profile_(profile), plane_(plane), names_(names.begin(), names.end()) {}
  void read(const ScannedEvent& e, std::span<std::optional<StatValue>> out) const override {
    profile_.find_own_event_stats(plane_, e, names_, out);
  }

 private:
  const Profile& profile_;
  uint32_t plane_;
  std::vector<StringId> names_;
};

}  // namespace

std::unique_ptr<StatReader> EventSource::stat_reader(const Profile& profile, uint32_t plane,
                                                     std::span<const StringId> names) const {
  return std::make_unique<StatReaderByEvent>(profile, plane, names);
}

bool EventSource::plane_may_have_stat(const Profile&, uint32_t, std::string_view) const {
  return true;
}

void Profile::find_event_stats(uint32_t plane, uint32_t e, std::span<const StringId> names,
                               std::span<std::optional<StatValue>> out) const {
  for (auto& o : out) o.reset();
  sources[planes[plane].source]->find_event_stats(*this, plane, e, names, out);
  bool missing = false;
  for (const auto& o : out) missing |= !o.has_value();
  if (!missing) return;
  for (const Stat& s : metadata_stats(events.metadata[e]))
    for (size_t i = 0; i < names.size(); ++i)
      if (s.name == names[i] && !out[i]) out[i] = s.value;
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
  std::vector<std::vector<uint32_t>> by_source(sources.size());
  bool any = false;
  for (uint32_t li : wanted) {
    const Line& line = lines[li];
    if (line.decoded) continue;
    by_source[line.source].push_back(li);
    any = true;
  }
  if (!any) return;
  if (!finished) throw std::logic_error("require_lines before finish_import");
  check_writable("require_lines");
  auto& self = const_cast<Profile&>(*this);
  for (size_t s = 0; s < by_source.size(); ++s) {
    if (by_source[s].empty()) continue;
    std::sort(by_source[s].begin(), by_source[s].end());
    by_source[s].erase(std::unique(by_source[s].begin(), by_source[s].end()), by_source[s].end());
    self.sources[s]->decode_lines(self, by_source[s]);
    check_line_events(*this, by_source[s]);
    for (uint32_t li : by_source[s]) {
      const Line& line = lines[li];
      if (line.device_clock && line.event_count > 0)
        device_clock_ranges_.emplace_back(line.first_event, line.first_event + line.event_count);
    }
  }
  std::sort(device_clock_ranges_.begin(), device_clock_ranges_.end());
}

bool Profile::on_device_clock(uint32_t e) const {
  if (device_clock_ranges_.empty()) return false;
  // The last range starting at or before e.
  auto it = std::upper_bound(device_clock_ranges_.begin(), device_clock_ranges_.end(),
                             std::pair<uint32_t, uint32_t>(e, UINT32_MAX));
  if (it == device_clock_ranges_.begin()) return false;
  --it;
  return e < it->second && events.device_duration_ps[e] != Events::kNoStat;
}

void Profile::check_writable(const char* what) const {
  if (read_only_.scopes.load() > 0)
    throw std::logic_error(std::string(what) +
                           " would change a profile that several threads are reading");
}

Profile::FileSlots Profile::add_file(const std::string& host, std::shared_ptr<Buffer> buffer) {
  FileSlots slots{static_cast<uint32_t>(hosts.size()), static_cast<uint32_t>(buffers.size()),
                  static_cast<uint32_t>(sources.size())};
  hosts.push_back(Host{host, buffer->path(), 0});
  buffers.push_back(std::move(buffer));
  return slots;
}

void EventSource::release_line_bytes(const Profile&, uint32_t) const {}

void Profile::forget_lines(const std::vector<uint32_t>& wanted) const {
  check_writable("forget_lines");
  auto& self = const_cast<Profile&>(*this);
  Events& ev = self.events;
  for (uint32_t li : wanted) {
    Line& line = self.lines[li];
    if (!line.decoded || line.event_count == 0) continue;
    const size_t b = line.first_event, e = b + line.event_count;
    ev.start_ps.discard(b, e), ev.duration_ps.discard(b, e), ev.metadata.discard(b, e);
    ev.raw.discard(b, e), ev.hlo_op.discard(b, e), ev.module.discard(b, e);
    if (ev.wide) ev.raw_high.discard(b, e);
    if (line.kernel_ids) ev.correlation_id.discard(b, e), ev.group_id.discard(b, e);
    if (line.device_clock) {
      ev.device_start_ps.discard(b, e), ev.device_duration_ps.discard(b, e);
      std::erase(device_clock_ranges_, std::pair<uint32_t, uint32_t>(
                                           line.first_event, line.first_event + line.event_count));
    }
    if (line.memory_ops) ev.memory_op.discard(b, e);
    line.decoded = false;
    sources[line.source]->release_line_bytes(*this, li);
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
