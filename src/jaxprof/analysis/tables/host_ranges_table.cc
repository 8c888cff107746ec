#include "jaxprof/analysis/tables/host_ranges_table.h"

#include <optional>

namespace jaxprof {

RecordTable host_ranges_table(const Profile& p) {
  std::vector<uint32_t> needed;
  uint64_t capacity = 0;
  for (const Plane& plane : p.planes)
    if (plane.kind == PlaneKind::kHostCpu)
      for (uint32_t li : plane.lines) {
        needed.push_back(li);
        capacity += p.lines[li].event_count;
      }
  p.require_lines(needed);

  RecordTable t;
  t.name = "host_ranges";
  RecordColumn& id = t.add("id", TableType::kInt64, "", "its row number (what parent refers to)");
  RecordColumn& host = t.add("host", TableType::kString, "", "the host");
  RecordColumn& thread = t.add("thread", TableType::kString, "", "the host thread (line)");
  RecordColumn& name = t.add("name", TableType::kString, "", "the event's display name");
  RecordColumn& depth = t.add("depth", TableType::kInt64, "", "0 for a range in no other");
  RecordColumn& parent = t.add("parent", TableType::kInt64, "",
                               "id of the range it starts in on its thread; null at depth 0");
  RecordColumn& start = t.add("start_ps", TableType::kInt64, "ps", "start on the timeline");
  RecordColumn& dur = t.add("duration_ps", TableType::kInt64, "ps", "duration");
  RecordColumn& corr = t.add("correlation_id", TableType::kInt64, "",
                             "its correlation_id stat (launches: the kernels'); null when none");
  for (RecordColumn& c : t.columns) c.reserve(capacity);
  StringCodes hosts(host), threads(thread), names(name);
  const Events& ev = p.events;
  const StringId corr_name = p.strings.find("correlation_id");
  std::vector<int32_t> name_code(p.event_metadata.size(), -1);
  std::vector<std::pair<int64_t, int64_t>> open;  // (end, id) of the ranges enclosing the next
  std::optional<StatValue> value[1];

  for (uint32_t pi = 0; pi < p.planes.size(); ++pi) {
    const Plane& plane = p.planes[pi];
    if (plane.kind != PlaneKind::kHostCpu) continue;
    std::unique_ptr<StatReader> reader;
    if (corr_name != UINT32_MAX && corr_name != 0 && p.plane_may_have_stat(pi, "correlation_id")) {
      StringId names_wanted[1] = {corr_name};
      reader = p.stat_reader(pi, names_wanted);
    }
    const int32_t host_code = hosts.code(p.hosts[plane.host].name);
    for (uint32_t li : plane.lines) {
      const Line& line = p.lines[li];
      const int32_t thread_code =
          threads.code(p.str(line.display_name != 0 ? line.display_name : line.name));
      open.clear();
      for (uint32_t k = 0; k < line.event_count; ++k) {
        const uint32_t e = line.first_event + k;
        const int64_t s = ev.start_ps[e], d = ev.duration_ps[e];
        // Lines are sorted by start, longest first: the ranges still open enclose this one.
        while (!open.empty() && open.back().first <= s) open.pop_back();
        const int64_t row = static_cast<int64_t>(t.rows);
        id.push(row);
        host.push_code(host_code);
        thread.push_code(thread_code);
        int32_t& nc = name_code[ev.metadata[e]];
        if (nc < 0) nc = names.code(p.event_display_name(e));
        name.push_code(nc);
        depth.push(static_cast<int64_t>(open.size()));
        if (open.empty())
          parent.push_null();
        else
          parent.push(open.back().second);
        start.push(s);
        dur.push(d);
        if (reader) {
          ScannedEvent se{s, d, ev.metadata[e], e, ev.raw_offset(e)};
          reader->read(se, value);
          if (std::optional<int64_t> v = value[0] ? value[0]->as_int() : std::nullopt)
            corr.push(*v);
          else
            corr.push_null();
        }
        open.emplace_back(s + d, row);
        ++t.rows;
      }
      if (!reader) corr.push_nulls(line.event_count);  // a plane without the stat: all null
    }
  }
  t.finish();
  return t;
}

}  // namespace jaxprof
