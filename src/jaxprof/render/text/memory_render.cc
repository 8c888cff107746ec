#include "jaxprof/render/text/memory_render.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "jaxprof/common/units.h"

namespace jaxprof {
namespace {

constexpr const char* kDash = "—";       // unknown, in tables
constexpr size_t kProgramsDetailed = 3;  // programs whose buffers the table lists

template <typename T>
std::string json_opt(const std::optional<T>& v) {
  if (!v) return "null";
  if constexpr (std::is_same_v<T, bool>) return *v ? "true" : "false";
  if constexpr (std::is_floating_point_v<T>) return number(*v);
  return std::to_string(*v);
}

std::string json_or_null(const std::string& s) { return s.empty() ? "null" : json_string(s); }

std::string json_strings(const std::vector<std::string>& v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + json_string(v[i]);
  return out + "]";
}

std::string bytes_cell(const std::optional<int64_t>& b) {
  return b ? human_bytes(static_cast<double>(*b)) : kDash;
}
std::string bytes_cell(uint64_t b) { return human_bytes(static_cast<double>(b)); }

std::string time_ns(int64_t ps) { return ps_to_ns_exact(ps); }

std::string json_allocator(const AllocatorMemory& a) {
  std::string out = fmt::format(
      "{{\"allocator\": {}, \"events\": {}, \"allocations\": {}, \"deallocations\": {}, "
      "\"first_ns\": {}, \"last_ns\": {}, \"peak_bytes_in_use\": {}, \"peak_time_ns\": {}, "
      "\"peak_events\": {}, \"peak_bytes_with_reserved\": {}, \"peak_with_reserved_time_ns\": {}, "
      "\"lifetime_peak_bytes_in_use\": {}, \"peak_in_capture\": {}, \"capacity_bytes\": {}, "
      "\"fragmentation_at_peak\": {}, \"start_bytes_in_use\": {}, "
      "\"end_bytes_in_use\": {}, ",
      json_string(a.allocator), a.allocations + a.deallocations, a.allocations, a.deallocations,
      time_ns(a.first_ps), time_ns(a.last_ps), json_opt(a.peak_bytes_in_use),
      a.peak_bytes_in_use ? time_ns(a.peak_ps) : "null", a.peak_events,
      json_opt(a.peak_with_reserved),
      a.peak_with_reserved ? time_ns(a.peak_with_reserved_ps) : "null",
      json_opt(a.lifetime_peak_bytes_in_use), json_opt(a.peak_in_capture),
      json_opt(a.capacity_bytes), json_opt(a.fragmentation_at_peak), json_opt(a.start_bytes_in_use),
      json_opt(a.end_bytes_in_use));
  out += fmt::format(
      "\"live_at_peak\": {{\"allocations\": {}, \"bytes\": {}, "
      "\"allocated_before_capture_bytes\": {}, \"groups\": {}, \"largest\": [",
      a.live_at_peak, a.live_at_peak_bytes, json_opt(a.allocated_before_capture_bytes),
      a.live_groups);
  for (size_t i = 0; i < a.largest_at_peak.size(); ++i) {
    const LiveAllocationGroup& g = a.largest_at_peak[i];
    out += fmt::format(
        "{}{{\"op\": {}, \"function\": {}, \"shape\": {}, \"dtype\": {}, \"region\": {}, "
        "\"count\": {}, \"bytes\": {}, \"requested_bytes\": {}, \"first_allocated_ns\": {}}}",
        i ? ", " : "", json_or_null(g.op), json_or_null(g.function), json_or_null(g.shape),
        json_or_null(g.dtype), json_or_null(g.region), g.count, g.bytes, g.requested_bytes, time_ns(g.first_allocated_ps));
  }
  out += fmt::format("]}}, \"timeline\": {{\"events\": {}, \"points\": [", a.timeline_events);
  for (size_t i = 0; i < a.timeline.size(); ++i) {
    const MemoryPoint& p = a.timeline[i];
    out += fmt::format("{}[{}, {}, {}]", i ? ", " : "", time_ns(p.time_ps), p.in_use, p.reserved);
  }
  out += fmt::format("]}}, \"notes\": {}}}", json_strings(a.notes));
  return out;
}

std::string json_buffer(const StaticBuffer& b) {
  return fmt::format(
      "{{\"bytes\": {}, \"kind\": {}, \"instruction\": {}, \"opcode\": {}, \"shape\": {}, "
      "\"op_name\": {}, \"source\": {}, \"logical_buffer_id\": {}}}",
      b.bytes, json_string(b.kind), json_string(b.instruction), json_or_null(b.opcode),
      json_or_null(b.shape), json_or_null(b.op_name), json_or_null(b.source), b.logical_buffer_id);
}

std::string json_program(const ProgramMemory& p) {
  std::string out = fmt::format(
      "{{\"module\": {}, \"program_id\": {}, \"memory_spaces\": [", json_string(p.module),
      p.program_id == -1 ? "null" : std::to_string(static_cast<uint64_t>(p.program_id)));
  for (size_t i = 0; i < p.spaces.size(); ++i) {
    const MemorySpaceUsage& u = p.spaces[i];
    out += fmt::format(
        "{}{{\"color\": {}, \"memory_space\": {}, \"peak_heap_bytes\": {}, "
        "\"heap_simulator_peak_bytes\": {}, \"peak_instruction\": {}, \"argument_bytes\": {}, "
        "\"output_bytes\": {}, \"alias_bytes\": {}, \"temp_bytes\": {}, \"constant_bytes\": {}, "
        "\"thread_local_bytes\": {}, \"indefinite_bytes\": {}, \"total_allocation_bytes\": {}, "
        "\"allocations\": {}, \"buffers_at_peak\": {}, \"largest_at_peak\": [",
        i ? ", " : "", u.color, json_string(u.label), json_opt(u.peak_heap_bytes),
        json_opt(u.heap_simulator_peak_bytes), json_or_null(u.peak_instruction), u.argument_bytes,
        u.output_bytes, u.alias_bytes, u.temp_bytes, u.constant_bytes, u.thread_local_bytes,
        u.indefinite_bytes, u.total_allocation_bytes, u.allocations, u.buffers_at_peak);
    for (size_t k = 0; k < u.largest_at_peak.size(); ++k)
      out += (k ? ", " : "") + json_buffer(u.largest_at_peak[k]);
    out += "]}";
  }
  out += fmt::format("], \"notes\": {}}}", json_strings(p.notes));
  return out;
}

std::string json(const MemoryResult& r) {
  std::string out = "{";
  if (r.has_timeline) {
    out += fmt::format("\"allocator_events\": {}, \"message\": {}, \"devices\": [",
                       r.timeline.events, json_or_null(r.timeline.no_events_reason));
    // Allocators grouped by (host, device); they are sorted so that a device's are together.
    const auto& all = r.timeline.allocators;
    for (size_t i = 0; i < all.size();) {
      size_t j = i;
      while (j < all.size() && all[j].host == all[i].host && all[j].device == all[i].device) ++j;
      out +=
          fmt::format("{}{{\"host\": {}, \"device\": {}, \"memory_space\": {}, \"allocators\": [",
                      i ? ", " : "", json_string(all[i].host), json_or_null(all[i].device),
                      json_or_null(all[i].memory_space));
      for (size_t k = i; k < j; ++k) out += (k > i ? ", " : "") + json_allocator(all[k]);
      out += "]}";
      i = j;
    }
    out += "]";
  }
  if (r.has_programs) {
    if (r.has_timeline) out += ", ";
    out += fmt::format("\"programs_message\": {}, \"programs\": [",
                       json_or_null(r.no_programs_reason));
    for (size_t i = 0; i < r.programs.programs.size(); ++i)
      out += (i ? ", " : "") + json_program(r.programs.programs[i]);
    out += "]";
  }
  return out + "}\n";
}

// One row per allocator and per (program, memory space).
std::string csv(const MemoryResult& r) {
  std::string out =
      "part,host,device,allocator,module,program_id,memory_space,peak_bytes,peak_time_ns,"
      "lifetime_peak_bytes_in_use,peak_in_capture,capacity_bytes,fragmentation_at_peak,"
      "allocated_before_capture_bytes,argument_bytes,output_bytes,alias_bytes,temp_bytes,"
      "constant_bytes,thread_local_bytes\n";
  auto opt = [](const auto& v) -> std::string {
    if (!v) return "";
    if constexpr (std::is_same_v<std::decay_t<decltype(*v)>, bool>)
      return *v ? "true" : "false";
    else if constexpr (std::is_floating_point_v<std::decay_t<decltype(*v)>>)
      return number(*v);
    else
      return std::to_string(*v);
  };
  for (const AllocatorMemory& a : r.timeline.allocators)
    out += fmt::format("allocator,{},{},{},,,{},{},{},{},{},{},{},{},,,,,,\n", csv_field(a.host),
                       csv_field(a.device), csv_field(a.allocator), csv_field(a.memory_space),
                       opt(a.peak_bytes_in_use), a.peak_bytes_in_use ? time_ns(a.peak_ps) : "",
                       opt(a.lifetime_peak_bytes_in_use), opt(a.peak_in_capture),
                       opt(a.capacity_bytes), opt(a.fragmentation_at_peak),
                       opt(a.allocated_before_capture_bytes));
  for (const ProgramMemory& p : r.programs.programs)
    for (const MemorySpaceUsage& u : p.spaces)
      out +=
          fmt::format("program,,,,{},{},{},{},,,,,,,{},{},{},{},{},{}\n", csv_field(p.module),
                      p.program_id == -1 ? "" : std::to_string(static_cast<uint64_t>(p.program_id)),
                      csv_field(u.label), opt(u.peak_heap_bytes), u.argument_bytes, u.output_bytes,
                      u.alias_bytes, u.temp_bytes, u.constant_bytes, u.thread_local_bytes);
  return out;
}

std::string fraction_cell(const std::optional<double>& f) { return f ? human_percent(*f) : kDash; }

std::string table_timeline(const MemoryTimeline& t) {
  if (!t.no_events_reason.empty()) return "Allocator timeline: " + t.no_events_reason + "\n";
  if (t.allocators.empty()) return "Allocator timeline: no allocator matches --allocator\n";
  std::string out;
  std::map<std::string, std::vector<const AllocatorMemory*>> by_host;
  for (const AllocatorMemory& a : t.allocators) by_host[a.host].push_back(&a);
  for (const auto& [host, allocators] : by_host) {
    uint64_t events = 0;
    for (const AllocatorMemory* a : allocators) events += a->allocations + a->deallocations;
    out += fmt::format("Allocator timeline, host {} ({} events)\n", host, events);
    Table table({"device", "allocator", "events", "peak in use", "at", "lifetime peak",
                 "in capture", "capacity", "frag. at peak"},
                {false, false, true, true, true, true, false, true, true});
    for (const AllocatorMemory* a : allocators)
      table.add({a->device.empty() ? kDash : a->device, a->allocator,
                 std::to_string(a->allocations + a->deallocations),
                 bytes_cell(a->peak_bytes_in_use),
                 a->peak_bytes_in_use ? human_duration(static_cast<double>(a->peak_ps)) : kDash,
                 bytes_cell(a->lifetime_peak_bytes_in_use),
                 a->peak_in_capture ? (*a->peak_in_capture ? "yes" : "no, before") : kDash,
                 bytes_cell(a->capacity_bytes), fraction_cell(a->fragmentation_at_peak)});
    out += table.render(60) + "\n";
    for (const AllocatorMemory* a : allocators) {
      if (a->peak_with_reserved && a->peak_bytes_in_use &&
          *a->peak_with_reserved != *a->peak_bytes_in_use)
        out +=
            fmt::format("{}: in use + reserved (bytes_reserved, XProf's peak) peaks at {} at {}\n",
                        a->allocator, human_bytes(static_cast<double>(*a->peak_with_reserved)),
                        human_duration(static_cast<double>(a->peak_with_reserved_ps)));
      for (const std::string& n : a->notes) out += fmt::format("note: {}: {}\n", a->allocator, n);
    }
    for (const AllocatorMemory* a : allocators) {
      if (!a->peak_bytes_in_use || a->largest_at_peak.empty()) continue;
      out += fmt::format(
          "\nLive at the peak of {} ({} at {}): {} allocations made during the capture, {}",
          a->allocator, human_bytes(static_cast<double>(*a->peak_bytes_in_use)),
          human_duration(static_cast<double>(a->peak_ps)), a->live_at_peak,
          human_bytes(static_cast<double>(a->live_at_peak_bytes)));
      if (a->allocated_before_capture_bytes)
        out += fmt::format("; {} allocated before it began",
                           human_bytes(static_cast<double>(*a->allocated_before_capture_bytes)));
      out += "\n";
      Table live({"bytes", "count", "op", "shape", "dtype", "region"},
                 {true, true, false, false, false, false});
      for (const LiveAllocationGroup& g : a->largest_at_peak)
        live.add({bytes_cell(g.bytes), std::to_string(g.count),
                  live_group_op(g), g.shape.empty() ? kDash : g.shape,
                  g.dtype.empty() ? kDash : g.dtype, g.region.empty() ? kDash : g.region});
      out += live.render(70);
      if (a->live_groups > a->largest_at_peak.size())
        out += fmt::format("({} more groups; --top 0 lists all)\n",
                           a->live_groups - a->largest_at_peak.size());
    }
    out += "\n";
  }
  return out;
}

std::string table_programs(const MemoryResult& r) {
  if (!r.no_programs_reason.empty()) return "Programs: " + r.no_programs_reason + "\n";
  std::string out = "Programs: static memory from XLA's buffer assignment\n";
  Table table({"module", "program", "space", "peak heap", "arguments", "outputs", "aliased",
               "temporaries", "constants"},
              {false, true, false, true, true, true, true, true, true});
  struct Ranked {
    const ProgramMemory* program;
    const MemorySpaceUsage* space;
  };
  std::vector<Ranked> ranked;
  for (const ProgramMemory& p : r.programs.programs)
    for (const MemorySpaceUsage& u : p.spaces) {
      // Memory spaces the program allocates nothing in (TPU's VMEM often) say nothing here.
      if (u.total_allocation_bytes == 0 && u.thread_local_bytes == 0) continue;
      table.add({p.module,
                 p.program_id == -1 ? kDash : std::to_string(static_cast<uint64_t>(p.program_id)),
                 u.label, u.peak_heap_bytes ? bytes_cell(*u.peak_heap_bytes) : kDash,
                 bytes_cell(u.argument_bytes), bytes_cell(u.output_bytes),
                 bytes_cell(u.alias_bytes), bytes_cell(u.temp_bytes),
                 bytes_cell(u.constant_bytes)});
      ranked.push_back({&p, &u});
    }
  out += table.render(40);
  for (const ProgramMemory& p : r.programs.programs)
    for (const std::string& n : p.notes) out += fmt::format("note: {}: {}\n", p.module, n);
  std::stable_sort(ranked.begin(), ranked.end(), [](const Ranked& x, const Ranked& y) {
    return x.space->peak_heap_bytes.value_or(0) > y.space->peak_heap_bytes.value_or(0);
  });
  size_t shown = 0;
  for (const Ranked& k : ranked) {
    if (shown == kProgramsDetailed) break;
    if (k.space->largest_at_peak.empty()) continue;
    ++shown;
    out +=
        fmt::format("\nLargest buffers at the peak heap of {} ({}, {}{})\n", k.program->module,
                    k.space->label, bytes_cell(k.space->peak_heap_bytes.value_or(0)),
                    k.space->peak_instruction.empty() ? "" : ", at " + k.space->peak_instruction);
    Table buffers({"bytes", "kind", "instruction", "shape", "op", "source"},
                  {true, false, false, false, false, false});
    for (const StaticBuffer& b : k.space->largest_at_peak)
      buffers.add({bytes_cell(static_cast<uint64_t>(std::max<int64_t>(b.bytes, 0))), b.kind,
                   b.instruction, b.shape.empty() ? kDash : b.shape,
                   b.op_name.empty() ? kDash : b.op_name, b.source.empty() ? kDash : b.source});
    out += buffers.render(60);
    if (k.space->buffers_at_peak > k.space->largest_at_peak.size())
      out += fmt::format("({} more buffers; --top 0 lists all)\n",
                         k.space->buffers_at_peak - k.space->largest_at_peak.size());
  }
  size_t more = 0;
  for (const Ranked& k : ranked) more += !k.space->largest_at_peak.empty();
  if (more > shown)
    out += fmt::format(
        "\n(buffers listed for the {} programs with the largest peak heap; "
        "--module NAME or --format json for the others)\n",
        shown);
  return out;
}

std::string table(const MemoryResult& r) {
  std::string out;
  if (r.has_timeline) out += table_timeline(r.timeline);
  if (r.has_programs) {
    if (!out.empty()) out += "\n";
    out += table_programs(r);
  }
  return out;
}

}  // namespace

std::string live_group_op(const LiveAllocationGroup& g) {
  if (!g.op.empty()) return g.op;
  if (!g.function.empty()) return "in " + g.function;
  return "(not recorded)";
}

std::string render_memory(const MemoryResult& result, OutputFormat format) {
  return render_in(format, result, json, csv, table);
}

}  // namespace jaxprof
