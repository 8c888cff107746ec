#include "jaxprof/render/html_memory.h"

#include <fmt/format.h>

#include <algorithm>

#include "jaxprof/render/flame_svg.h"
#include "jaxprof/render/html_table.h"
#include "jaxprof/render/memory_chart.h"
#include "jaxprof/render/units.h"

namespace jaxprof {
namespace {

// Charts drawn at most: a profile of many hosts and GPUs lists the rest in the table only.
constexpr size_t kMaxCharts = 8;

HtmlCell bytes_cell(const std::optional<int64_t>& b) {
  if (!b) return {"—", std::nullopt};
  return {human_bytes(static_cast<double>(*b)), static_cast<double>(*b)};
}

std::string muted(const std::string& text) {
  return fmt::format("<p class=\"muted\">{}</p>\n", xml_escape(text));
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
        {text_cell(a.host), text_cell(a.device), text_cell(a.allocator),
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
  return out;
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
  for (size_t i = 0; i < rows.size() && i < top; ++i) {
    const auto& [p, u] = rows[i];
    std::string largest;
    if (!u->largest_at_peak.empty()) {
      const StaticBuffer& b = u->largest_at_peak.front();
      largest = fmt::format("{} {} ({}){}", b.instruction, b.shape,
                            human_bytes(static_cast<double>(b.bytes)),
                            b.source.empty() ? "" : " at " + b.source);
    }
    table.rows.push_back(
        {text_cell(p->module),
         text_cell(p->program_id == -1 ? "—"
                                       : std::to_string(static_cast<uint64_t>(p->program_id))),
         text_cell(u->label),
         u->peak_heap_bytes ? bytes(*u->peak_heap_bytes) : bytes_cell(std::nullopt),
         bytes(u->argument_bytes), bytes(u->output_bytes), bytes(u->temp_bytes),
         text_cell(largest)});
  }
  return muted(
             "Static memory per compiled program, from XLA's buffer assignment: the peak heap "
             "as XProf's memory viewer computes it (temporaries live at once, plus arguments, "
             "outputs and constants).") +
         parts.table(table);
}

}  // namespace

std::string html_memory_body(HtmlPageParts& parts, const MemoryResult& r, size_t top) {
  return allocators_part(parts, r.timeline) + programs_part(parts, r, top);
}

}  // namespace jaxprof
