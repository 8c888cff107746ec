#include "jaxprof/render/html/html_memory.h"

#include <fmt/format.h>

#include <algorithm>

#include "jaxprof/render/flame/flame_svg.h"
#include "jaxprof/render/html/html_table.h"
#include "jaxprof/render/html/memory_chart.h"
#include "jaxprof/render/text/memory_render.h"
#include "jaxprof/common/units.h"

namespace jaxprof {
namespace {

// Charts drawn at most: a profile of many hosts and GPUs lists the rest in the table only.
constexpr size_t kMaxCharts = 8;
constexpr const char* kBuffersTable = "memory-buffers-table";

HtmlCell bytes_cell(const std::optional<int64_t>& b) {
  if (!b) return {"—", std::nullopt};
  return {human_bytes(static_cast<double>(*b)), static_cast<double>(*b)};
}

std::string program_text(const ProgramMemory& p) {
  return p.program_id == -1 ? "—" : std::to_string(static_cast<uint64_t>(p.program_id));
}

std::string muted(const std::string& text) {
  return fmt::format("<p class=\"muted\">{}</p>\n", xml_escape(text));
}

// What was live at each allocator's peak, by op (or the JAX function that allocated it), shape
// and size: one table for all allocators, filterable by allocator.
std::string live_part(HtmlPageParts& parts, const MemoryTimeline& t) {
  HtmlTable table;
  table.id = "memory-live-table";
  table.filterable = true;
  for (auto [name, numeric] : {std::pair{"allocator", false},
                               {"op or function", false},
                               {"shape", false},
                               {"dtype", false},
                               {"count", true},
                               {"bytes", true},
                               {"share of the peak", true},
                               {"first allocated", true}})
    table.add_column(name, numeric);
  for (const AllocatorMemory& a : t.allocators) {
    if (!a.peak_bytes_in_use) continue;
    for (const LiveAllocationGroup& g : a.largest_at_peak)
      table.rows.push_back(
          {name_cell(a.allocator), name_cell(live_group_op(g)),
           g.shape.empty() ? text_cell("—") : name_cell(g.shape),
           text_cell(g.dtype.empty() ? "—" : g.dtype), count_cell(static_cast<double>(g.count)),
           bytes_cell(static_cast<int64_t>(g.bytes)),
           *a.peak_bytes_in_use > 0
               ? percent_cell(static_cast<double>(g.bytes) /
                              static_cast<double>(*a.peak_bytes_in_use))
               : text_cell("—"),
           duration_cell(static_cast<double>(g.first_allocated_ps))});
  }
  if (table.rows.empty()) return "";
  return muted(
             "Live at each allocator's peak: the allocations made during the capture and not "
             "yet freed, grouped by op (or, when the runtime records none, by the JAX function "
             "that allocated them and their size); the rest of the peak was allocated before "
             "the capture began.") +
         parts.table(table);
}

std::string allocators_part(HtmlPageParts& parts, const MemoryTimeline& t) {
  if (!t.no_events_reason.empty())
    return fmt::format("<p class=\"none\">{}</p>\n", xml_escape(t.no_events_reason));
  std::string out;
  std::vector<std::string> charts = svg_memory_timelines(t);
  for (size_t i = 0; i < charts.size() && i < kMaxCharts; ++i) out += charts[i];
  if (charts.size() > kMaxCharts)
    out += muted(fmt::format("{} more allocators: see the table and `jaxprof memory`.",
                             charts.size() - kMaxCharts));
  HtmlTable table;
  table.id = "memory-allocators-table";
  table.filterable = true;
  for (auto [name, numeric] : {std::pair{"host", false},
                               {"device", false},
                               {"allocator", false},
                               {"events", true},
                               {"peak in use", true},
                               {"at", true},
                               {"lifetime peak", true},
                               {"peak in capture", false},
                               {"capacity", true},
                               {"live at peak, from the capture", true}})
    table.add_column(name, numeric);
  for (const AllocatorMemory& a : t.allocators)
    table.rows.push_back(
        {name_cell(a.host), name_cell(a.device.empty() ? "—" : a.device), name_cell(a.allocator),
         count_cell(static_cast<double>(a.allocations + a.deallocations)),
         bytes_cell(a.peak_bytes_in_use),
         a.peak_bytes_in_use ? duration_cell(static_cast<double>(a.peak_ps)) : text_cell("—"),
         bytes_cell(a.lifetime_peak_bytes_in_use),
         text_cell(!a.peak_in_capture   ? "—"
                   : *a.peak_in_capture ? "yes"
                                        : "no, before it"),
         bytes_cell(a.capacity_bytes), bytes_cell(static_cast<int64_t>(a.live_at_peak_bytes))});
  out += parts.table(table);
  for (const AllocatorMemory& a : t.allocators)
    for (const std::string& n : a.notes) out += muted(a.allocator + ": " + n);
  return out + live_part(parts, t);
}

std::string programs_part(HtmlPageParts& parts, const MemoryResult& r, size_t top) {
  if (!r.no_programs_reason.empty())
    return fmt::format("<p class=\"none\">{}</p>\n", xml_escape(r.no_programs_reason));
  struct Row {
    const ProgramMemory* p;
    const MemorySpaceUsage* u;
  };
  std::vector<Row> rows;
  for (const ProgramMemory& p : r.programs.programs)
    for (const MemorySpaceUsage& u : p.spaces)
      if (u.total_allocation_bytes > 0 || u.thread_local_bytes > 0) rows.push_back({&p, &u});
  std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
    return a.u->peak_heap_bytes.value_or(0) > b.u->peak_heap_bytes.value_or(0);
  });
  HtmlTable table;
  table.id = "memory-programs-table";
  table.filterable = true;
  for (auto [name, numeric] : {std::pair{"module", false},
                               {"program", false},
                               {"memory space", false},
                               {"peak heap", true},
                               {"arguments", true},
                               {"outputs", true},
                               {"temporaries", true},
                               {"largest buffer at the peak", false}})
    table.add_column(name, numeric);
  auto bytes = [](uint64_t b) { return bytes_cell(static_cast<int64_t>(b)); };
  HtmlTable buffers;
  buffers.id = kBuffersTable;
  buffers.filterable = true;
  for (auto [name, numeric] : {std::pair{"module", false},
                               {"memory space", false},
                               {"bytes", true},
                               {"kind", false},
                               {"instruction", false},
                               {"shape", false},
                               {"JAX op", false},
                               {"source", false}})
    buffers.add_column(name, numeric);
  for (size_t i = 0; i < rows.size() && i < top; ++i) {
    const auto& [p, u] = rows[i];
    std::string largest;
    if (!u->largest_at_peak.empty()) {
      const StaticBuffer& b = u->largest_at_peak.front();
      largest = fmt::format("{} {} ({}){}", b.instruction, b.shape,
                            human_bytes(static_cast<double>(b.bytes)),
                            b.source.empty() ? "" : " at " + b.source);
    }
    for (const StaticBuffer& b : u->largest_at_peak) {
      buffers.rows.push_back(
          {name_cell(p->module), text_cell(u->label), bytes_cell(b.bytes), text_cell(b.kind),
           name_cell(b.instruction), b.shape.empty() ? text_cell("—") : name_cell(b.shape),
           long_cell(b.op_name.empty() ? "—" : b.op_name, b.op_name),
           b.source.empty() ? text_cell("—") : name_cell(b.source)});
      buffers.row_data.push_back({{"module", p->module}, {"program", program_text(*p)}});
    }
    HtmlDrill to_buffers;
    to_buffers.targets = kBuffersTable;
    to_buffers.scope = {{"module", p->module}, {"program", program_text(*p)}};
    table.rows.push_back(
        {name_cell(p->module, std::move(to_buffers)), text_cell(program_text(*p)),
         text_cell(u->label),
         u->peak_heap_bytes ? bytes(*u->peak_heap_bytes) : bytes_cell(std::nullopt),
         bytes(u->argument_bytes), bytes(u->output_bytes), bytes(u->temp_bytes),
         long_cell(largest, largest)});
  }
  return muted(
             "Static memory per compiled program, from XLA's buffer assignment: the peak heap "
             "as XProf's memory viewer computes it (temporaries live at once, plus arguments, "
             "outputs and constants). Click a module for the largest buffers at its peak.") +
         parts.table(table) +
         (buffers.rows.empty()
              ? std::string()
              : muted("The largest buffers live at each program's peak heap, with the HLO "
                      "instruction that defines them, the JAX op and the source line.") +
                    parts.table(buffers));
}

}  // namespace

std::string html_memory_body(HtmlPageParts& parts, const MemoryResult& r, size_t top) {
  return allocators_part(parts, r.timeline) + programs_part(parts, r, top);
}

}  // namespace jaxprof
