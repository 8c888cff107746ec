#include "jaxprof/render/html/html_report_ops.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "jaxprof/render/html/html_short_text.h"
#include "jaxprof/render/html/html_table.h"

namespace jaxprof {
namespace {

constexpr const char* kNoSource = "(no source line)";

// Which of `n` rows (by weight, descending) a table holds: the first `top`, then the first `top`
// of each listed module (marked extra). Returns (row index, extra) in the rows' order.
template <typename ModuleOf>
std::vector<std::pair<size_t, bool>> pick_rows(size_t n, ModuleOf module_of,
                                               const std::vector<std::string>& modules,
                                               size_t top) {
  std::unordered_set<std::string> listed(modules.begin(), modules.end());
  std::unordered_map<std::string, size_t> taken;
  std::vector<std::pair<size_t, bool>> out;
  for (size_t i = 0; i < n; ++i) {
    const std::string& m = module_of(i);
    bool first = i < top;
    bool extra = !first && listed.count(m) && taken[m] < top;
    if (first || extra) {
      ++taken[m];
      out.push_back({i, extra});
    }
  }
  return out;
}

HtmlDrill scope(std::string targets, std::vector<std::pair<std::string, std::string>> keys) {
  HtmlDrill d;
  d.targets = std::move(targets);
  d.scope = std::move(keys);
  return d;
}

std::string both_tables() { return fmt::format("{} {}", kOpsTable, kSourcesTable); }

// What the table holds of `all` rows: all of them, or the top and each listed module's top.
std::string holds(size_t all, size_t held, size_t top, const char* what) {
  if (held == all) return fmt::format("All {} {}.", all, what);
  return fmt::format(
      "{} {} in all: the table holds the top {} and the top {} of each module listed above ({} "
      "rows, the rest shown when you filter or pick a module).",
      all, what, std::min(top, all), top, held);
}

struct SourceLine {
  std::string module, source;
  uint64_t ops = 0, count = 0;
  int64_t self_ps = 0, total_ps = 0;
  double share = 0;
  const SummaryOp* heaviest = nullptr;
};

}  // namespace

HtmlCell module_cell(const std::string& module) {
  if (module.empty()) return name_cell("\u2014");
  return name_cell(module, scope(both_tables(), {{"module", module}}));
}

std::string html_ops_body(HtmlPageParts& parts, const std::vector<SummaryOp>& ops,
                          const std::vector<std::string>& modules, size_t top) {
  if (ops.empty()) return "<p class=\"none\">No device ops in this profile.</p>\n";
  HtmlTable t;
  t.id = kOpsTable;
  t.filterable = true;
  t.add_column("op", false);
  t.add_column("module", false);
  t.add_column("opcode", false);
  t.add_column("count", true);
  t.add_column("total", true);
  t.add_column("self", true);
  t.add_column("share", true);
  t.add_column("JAX op", false);
  t.add_column("source line", false);
  auto picked = pick_rows(
      ops.size(), [&](size_t i) -> const std::string& { return ops[i].module; }, modules, top);
  for (auto [i, extra] : picked) {
    const SummaryOp& o = ops[i];
    HtmlDrill detail;
    detail.detail = true;
    t.rows.push_back(
        {name_cell(o.name, detail), module_cell(o.module), name_cell(o.opcode),
         count_cell(static_cast<double>(o.count)), duration_cell(static_cast<double>(o.total_ps)),
         duration_cell(static_cast<double>(o.self_ps)), percent_cell(o.share),
         long_cell(short_op_path(o.op_name), o.op_name),
         o.source.empty()
             ? text_cell("")
             : long_cell(short_source(o.source), o.source,
                         scope(kSourcesTable, {{"module", o.module}, {"source", o.source}}))});
    std::vector<std::pair<std::string, std::string>> data = {
        {"module", o.module}, {"source", o.source}, {"op", o.name}};
    if (extra) data.push_back({"extra", "1"});
    t.row_data.push_back(std::move(data));
  }
  return fmt::format(
             "<p class=\"muted\">HLO ops over all devices, by self time; share = self time / busy "
             "time of all devices. {} Click an op for its whole JAX op path and source line, a "
             "module to narrow this table and the source lines to it, a source line for its "
             "time.</p>\n",
             holds(ops.size(), t.rows.size(), top, "ops")) +
         parts.table(t);
}

std::string html_sources_body(HtmlPageParts& parts, const std::vector<SummaryOp>& ops,
                              const std::vector<std::string>& modules, size_t top) {
  if (ops.empty()) return "<p class=\"none\">No device ops in this profile.</p>\n";
  // Ops by (module, source line); the ops come heaviest first, so the first one met is the
  // heaviest of its line.
  std::map<std::pair<std::string, std::string>, SourceLine> by_line;
  for (const SummaryOp& o : ops) {
    SourceLine& l = by_line[{o.module, o.source}];
    if (!l.heaviest) {
      l.module = o.module;
      l.source = o.source;
      l.heaviest = &o;
    }
    ++l.ops;
    l.count += o.count;
    l.self_ps += o.self_ps;
    l.total_ps += o.total_ps;
    l.share += o.share;
  }
  // Each op's share is at most 1 (ShareGuard warned of any clipped); so is a line's.
  for (auto& [key, l] : by_line) l.share = std::min(l.share, 1.0);
  std::vector<const SourceLine*> lines;
  for (const auto& [key, l] : by_line) lines.push_back(&l);
  std::stable_sort(lines.begin(), lines.end(), [](const SourceLine* a, const SourceLine* b) {
    return a->self_ps > b->self_ps;
  });
  HtmlTable t;
  t.id = kSourcesTable;
  t.filterable = true;
  t.add_column("source line", false);
  t.add_column("module", false);
  t.add_column("ops", true);
  t.add_column("count", true);
  t.add_column("self", true);
  t.add_column("share", true);
  t.add_column("heaviest op", false);
  auto picked = pick_rows(
      lines.size(), [&](size_t i) -> const std::string& { return lines[i]->module; }, modules, top);
  for (auto [i, extra] : picked) {
    const SourceLine& l = *lines[i];
    HtmlDrill to_ops = scope(kOpsTable, {{"module", l.module}, {"source", l.source}});
    t.rows.push_back(
        {l.source.empty() ? name_cell(kNoSource, std::move(to_ops))
                          : long_cell(short_source(l.source), l.source, std::move(to_ops)),
         module_cell(l.module), count_cell(static_cast<double>(l.ops)),
         count_cell(static_cast<double>(l.count)), duration_cell(static_cast<double>(l.self_ps)),
         percent_cell(l.share), name_cell(l.heaviest->name)});
    std::vector<std::pair<std::string, std::string>> data = {{"module", l.module},
                                                             {"source", l.source}};
    if (extra) data.push_back({"extra", "1"});
    t.row_data.push_back(std::move(data));
  }
  return fmt::format(
             "<p class=\"muted\">Device time by the source line XLA recorded for each op "
             "(fusions: the line of their root), per module: the self time of the ops on the "
             "line. {} Click a line for its ops.</p>\n",
             holds(lines.size(), t.rows.size(), top, "lines")) +
         parts.table(t);
}

}  // namespace jaxprof
