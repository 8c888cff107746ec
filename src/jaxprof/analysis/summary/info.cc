#include "jaxprof/analysis/summary/info.h"

#include <algorithm>
#include <limits>
#include <map>

namespace jaxprof {

ProfileInfo compute_info(const Profile& p) {
  p.require_all_lines();
  ProfileInfo out;
  for (const Host& h : p.hosts) {
    out.hosts.push_back(h.name);
    out.files.push_back(h.path);
  }
  out.base_ns = p.base_ns;
  out.events = p.events.size();
  out.errors = p.errors;
  out.warnings = p.warnings;
  int64_t first = std::numeric_limits<int64_t>::max(), last = std::numeric_limits<int64_t>::min();
  for (uint32_t pi = 0; pi < p.planes.size(); ++pi) {
    const Plane& plane = p.planes[pi];
    PlaneInfo& pl = out.planes.emplace_back();
    pl.name = std::string(p.str(plane.name));
    pl.kind = plane_kind_name(plane.kind);
    pl.host = p.hosts[plane.host].name;
    pl.id = plane.id;
    for (const Stat& s : plane.stats) {
      std::string value = s.value.to_string();
      pl.stats.emplace_back(std::string(p.str(s.name)), value);
    }
    for (uint32_t li : plane.lines) {
      const Line& line = p.lines[li];
      LineInfo& l = pl.lines.emplace_back();
      l.name = std::string(p.str(line.display_name != 0 ? line.display_name : line.name));
      l.id = line.id;
      l.events = line.event_count;
      pl.events += line.event_count;
      if (line.event_count == 0) continue;
      l.first_ps = std::numeric_limits<int64_t>::max();
      l.last_ps = std::numeric_limits<int64_t>::min();
      for (uint32_t e = line.first_event; e < line.first_event + line.event_count; ++e) {
        l.last_ps = std::max(l.last_ps, p.events.end_ps(e));
      }
      l.first_ps = p.events.start_ps[line.first_event];
      first = std::min(first, l.first_ps);
      last = std::max(last, l.last_ps);
    }
  }
  if (first <= last) {
    out.first_ps = first;
    out.last_ps = last;
  }
  // Modules: those events name, plus those only the HLO index knows.
  std::vector<uint64_t> module_events(p.modules.size(), 0);
  for (uint32_t m : p.events.module) ++module_events[m];
  std::map<std::pair<std::string, ProgramId>, ModuleInfo> modules;
  for (uint32_t m = 1; m < p.modules.size(); ++m) {
    const ModuleKey& k = p.modules[m];
    ModuleInfo& info = modules[{std::string(p.str(k.name)), k.program_id}];
    info.name = std::string(p.str(k.name));
    info.program_id = k.program_id;
    info.events += module_events[m];
  }
  for (const auto& mod : p.hlo.modules()) {
    ProgramId id = mod->program_id == -1 ? kNoProgram : static_cast<ProgramId>(mod->program_id);
    ModuleInfo& info = modules[{std::string(mod->name), id}];
    info.name = std::string(mod->name);
    info.program_id = id;
    info.has_hlo = true;
    info.instructions = mod->instructions.size();
  }
  for (auto& [key, info] : modules) out.modules.push_back(std::move(info));
  return out;
}

}  // namespace jaxprof
