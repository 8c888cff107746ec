#include "jaxprof/render/text/critical_path_render.h"

#include <fmt/format.h>

#include <algorithm>

#include "jaxprof/common/units.h"

namespace jaxprof {

namespace {

std::string change_json(const WhatIfChange& c) {
  return fmt::format(
      "{{\"spec\": {}, \"predicted_step_ns\": {}, \"measured_step_ns\": {}, \"change_ns\": {}, "
      "\"change\": {}{}}}",
      json_string(c.spec), ps_to_ns(c.predicted_step_ps), ps_to_ns(c.measured_step_ps),
      ps_to_ns(c.change_ps), number(c.measured_step_ps > 0 ? c.change_ps / c.measured_step_ps : 0),
      c.basis.empty() ? "" : ", \"basis\": " + json_string(c.basis));
}

std::string changes_json(const std::vector<WhatIfChange>& changes) {
  std::string out = "[";
  for (size_t i = 0; i < changes.size(); ++i) out += (i ? ", " : "") + change_json(changes[i]);
  return out + "]";
}

// What a step's path takes in JSON, near enough (its names unescaped, its numbers at most 20
// digits): reserved up front, so that tens of MB are written once, never grown and copied.
size_t path_json_bytes(const CriticalStep& s) {
  constexpr size_t kSegment = 100 + 2 * 20;  // the field names, quotes and separators; 2 numbers
  size_t bytes = 0;
  for (const PathSegment& p : s.path)
    bytes += kSegment + p.host.size() + p.device.size() + p.name.size() + p.kind.size() +
             p.category.size();
  return bytes;
}

// Appended to `out` in place: a step's JSON may be tens of MB.
void append_step_json(std::string& out, const CriticalStep& s) {
  out += fmt::format(
      "{{\"number\": {}, \"name\": {}, \"host\": {}, \"start_ps\": {}, \"step_ns\": {}, "
      "\"marked_ns\": {}, \"warmup\": {}, \"nodes\": {}, \"edges\": {}, \"critical_ns\": {{",
      s.number, json_string(s.name), json_string(s.host), s.start_ps, ps_to_ns_exact(s.step_ps),
      ps_to_ns_exact(s.marked_ps), s.warmup ? "true" : "false", s.nodes, s.edges);
  for (size_t i = 0; i < s.critical_ps.size(); ++i)
    out += fmt::format("{}{}: {}", i ? ", " : "", json_string(s.critical_ps[i].first),
                       ps_to_ns_exact(s.critical_ps[i].second));
  out += "}, \"path\": [";
  // Appended in place: a step's path may hold a few hundred thousand segments, and a string per
  // field took a fifth of the command on the 80 MB TPU profile.
  for (size_t i = 0; i < s.path.size(); ++i) {
    const PathSegment& p = s.path[i];
    out += i ? ", {\"host\": " : "{\"host\": ";
    append_json_string(out, p.host);
    out += ", \"device\": ";
    append_json_string(out, p.device);
    out += ", \"name\": ";
    append_json_string(out, p.name);
    out += ", \"kind\": ";
    append_json_string(out, p.kind);
    out += ", \"category\": ";
    append_json_string(out, p.category);
    out += ", \"start_ps\": ";
    const fmt::format_int start(p.start_ps), duration(p.duration_ps);
    out.append(start.data(), start.size());
    out += ", \"duration_ps\": ";
    out.append(duration.data(), duration.size());
    out += '}';
  }
  out += fmt::format("], \"ops_total\": {}, \"ops\": [", s.ops_total);
  for (size_t i = 0; i < s.ops.size(); ++i) {
    const PathOp& o = s.ops[i];
    out += fmt::format(
        "{}{{\"name\": {}, \"category\": {}, \"count\": {}, \"total_ns\": {}, \"on_path_ns\": {}, "
        "\"slack_ns\": {}}}",
        i ? ", " : "", json_string(o.name), json_string(o.category), o.count,
        ps_to_ns_exact(o.total_ps), ps_to_ns_exact(o.on_path_ps), ps_to_ns_exact(o.slack_ps));
  }
  out += "], \"collectives\": [";
  for (size_t i = 0; i < s.collectives.size(); ++i) {
    const HeldCollective& c = s.collectives[i];
    out += fmt::format(
        "{}{{\"name\": {}, \"participants\": {}, \"hosts\": {}, \"host\": {}, \"device\": {}, "
        "\"after\": {}, \"after_kind\": {}, \"arrival_ps\": {}, \"spread_ns\": {}}}",
        i ? ", " : "", json_string(c.name), c.participants, c.hosts, json_string(c.host),
        json_string(c.device), json_string(c.after), json_string(c.after_kind), c.arrival_ps,
        ps_to_ns_exact(c.spread_ps));
  }
  out += fmt::format("], \"collectives_partial\": {}", s.collectives_partial);
  if (!s.predictions.empty()) {
    out += fmt::format(", \"predicted_step_ns\": {}, \"what_if\": [",
                       ps_to_ns_exact(s.predicted_all_ps));
    for (size_t i = 0; i < s.predictions.size(); ++i)
      out += fmt::format("{}{{\"spec\": {}, \"predicted_step_ns\": {}, \"change_ns\": {}}}",
                         i ? ", " : "", json_string(s.predictions[i].spec),
                         ps_to_ns_exact(s.predictions[i].predicted_ps),
                         ps_to_ns_exact(s.predictions[i].predicted_ps - s.step_ps));
    out += "]";
  }
  out += '}';
}

std::string json(const CriticalPathResult& r) {
  std::string out = fmt::format("{{\"step_source\": {}, \"assumptions\": {}, \"steps\": [",
                                json_string(r.step_source), json_string_array(r.assumptions));
  // Besides the paths, a few hundred bytes per step and per op (a margin, not a bound).
  size_t bytes = out.size() + 4096;
  for (const CriticalStep& s : r.steps)
    bytes += path_json_bytes(s) + 1024 + (s.ops.size() + s.collectives.size()) * 320;
  out.reserve(bytes);
  for (size_t i = 0; i < r.steps.size(); ++i) {
    if (i) out += ", ";
    append_step_json(out, r.steps[i]);
  }
  out += "], \"what_if\": ";
  out += changes_json(r.what_ifs);
  if (!r.combined.empty()) {
    out += ", \"what_if_combined\": ";
    out += change_json(r.combined[0]);
  }
  out += ", \"ranked\": ";
  out += changes_json(r.ranked);
  out += ", \"warnings\": ";
  out += json_string_array(r.warnings);
  out += "}\n";
  return out;
}

// One row per op of each step: what a spreadsheet wants.
std::string csv(const CriticalPathResult& r) {
  std::string out =
      "step,step_name,step_ns,warmup,op,category,count,total_ns,on_path_ns,slack_ns\n";
  for (const CriticalStep& s : r.steps)
    for (const PathOp& o : s.ops)
      out += fmt::format("{},{},{},{},{},{},{},{},{},{}\n", s.number, csv_field(s.name),
                         ps_to_ns_exact(s.step_ps), s.warmup ? 1 : 0, csv_field(o.name),
                         csv_field(o.category), o.count, ps_to_ns_exact(o.total_ps),
                         ps_to_ns_exact(o.on_path_ps), ps_to_ns_exact(o.slack_ps));
  return out;
}

std::string categories_text(const CriticalStep& s, size_t n) {
  std::string out;
  for (size_t i = 0; i < s.critical_ps.size() && i < n; ++i)
    out += fmt::format("{}{} {}", i ? ", " : "", s.critical_ps[i].first,
                       human_percent(s.step_ps > 0 ? static_cast<double>(s.critical_ps[i].second) /
                                                         static_cast<double>(s.step_ps)
                                                   : 0));
  return out;
}

std::string steps_table(const CriticalPathResult& r) {
  const bool predicted = !r.steps.empty() && !r.steps[0].predictions.empty();
  std::vector<TableColumn> columns = {
      {"step", Measure::kLabel}, {"name"}, {"warm-up"}, {"step time", Measure::kDuration}};
  if (predicted) columns.push_back({"predicted", Measure::kDuration});
  columns.insert(columns.end(), {{"path segments", Measure::kCount}, {"on the path"}});
  Table t(std::move(columns));
  for (const CriticalStep& s : r.steps) {
    std::vector<Cell> row = {std::to_string(s.number), s.name, s.warmup ? "yes" : "", s.step_ps};
    if (predicted) row.push_back(s.predicted_all_ps);
    row.insert(row.end(), {s.path.size(), categories_text(s, 4)});
    t.add(std::move(row));
  }
  return "steps (" + r.step_source + ")\n" + t.render(60);
}

// The step the detail is shown for: the slowest steady step (any step when all are warm-up).
const CriticalStep* detail_step(const CriticalPathResult& r) {
  const CriticalStep* best = nullptr;
  for (int pass = 0; pass < 2 && !best; ++pass)
    for (const CriticalStep& s : r.steps)
      if ((pass == 1 || !s.warmup) && (!best || s.step_ps > best->step_ps)) best = &s;
  return best;
}

// The step's collectives that the most waited on: who arrived last, after what.
std::string held_table(const CriticalStep& s, size_t top) {
  if (s.collectives.empty()) return {};
  std::vector<const HeldCollective*> by_spread;
  for (const HeldCollective& c : s.collectives) by_spread.push_back(&c);
  std::stable_sort(
      by_spread.begin(), by_spread.end(),
      [](const HeldCollective* a, const HeldCollective* b) { return a->spread_ps > b->spread_ps; });
  const size_t n = top ? std::min(top, by_spread.size()) : by_spread.size();
  Table t({{"collective"},
           {"participants", Measure::kCount},
           {"held by"},
           {"after"},
           {"others waited", Measure::kDuration}});
  for (size_t i = 0; i < n; ++i) {
    const HeldCollective& c = *by_spread[i];
    t.add({c.name, c.participants, c.hosts > 1 ? c.host + " " + c.device : c.device, c.after,
           c.spread_ps});
  }
  std::string out =
      "\ncollectives of the step, held by their last participant to arrive (longest wait first)\n" +
      t.render(60);
  if (n < by_spread.size()) out += more_rows_line(n, by_spread.size(), "collectives") + "\n";
  return out;
}

std::string detail_table(const CriticalStep& s, size_t top) {
  std::string out =
      fmt::format("\ncritical path of step {} ({}, {}): {} segments\n", s.number, s.name,
                  human_duration(static_cast<double>(s.step_ps)), s.path.size());
  // The longest segments, in the order they ran.
  std::vector<size_t> idx(s.path.size());
  for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
  std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) {
    return s.path[a].duration_ps > s.path[b].duration_ps;
  });
  const size_t shown = top ? std::min(top, idx.size()) : idx.size();
  idx.resize(shown);
  std::sort(idx.begin(), idx.end());
  Table path({{"start", Measure::kDuration},
              {"duration", Measure::kDuration},
              {"kind"},
              {"device"},
              {"name"}});
  for (size_t i : idx) {
    const PathSegment& p = s.path[i];
    path.add({p.start_ps - s.start_ps, p.duration_ps, std::string(p.kind),
              p.device.empty() ? "host " + std::string(p.host) : p.device, std::string(p.name)});
  }
  out += path.render(60);
  if (shown < s.path.size()) out += more_rows_line(shown, s.path.size(), "segments") + "\n";
  Table ops({{"op"},
             {"category"},
             {"count", Measure::kCount},
             {"total", Measure::kDuration},
             {"on path", Measure::kDuration},
             {"slack", Measure::kDuration}});
  const size_t n = top ? std::min(top, s.ops.size()) : s.ops.size();
  for (size_t i = 0; i < n; ++i) {
    const PathOp& o = s.ops[i];
    ops.add({o.name, o.category, o.count, o.total_ps, o.on_path_ps, o.slack_ps});
  }
  out += "\nops of the step, most time on the path first\n" + ops.render(60);
  if (n < s.ops_total) out += more_rows_line(n, s.ops_total, "ops") + "\n";
  return out + held_table(s, top);
}

std::string changes_table(const std::vector<WhatIfChange>& changes, const std::string& title) {
  if (changes.empty()) return {};
  Table t({{"change"},
           {"predicted step", Measure::kDuration},
           {"measured step", Measure::kDuration},
           {"gain", Measure::kDuration},
           {"gain %", Measure::kShare}});
  for (const WhatIfChange& c : changes)
    t.add({c.spec, c.predicted_step_ps, c.measured_step_ps, -c.change_ps,
           c.measured_step_ps > 0 ? -c.change_ps / c.measured_step_ps : 0.0});
  return "\n" + title + "\n" + t.render(60);
}

std::string table(const CriticalPathResult& r, size_t top) {
  if (r.steps.empty()) return "no device work to follow\n";
  std::string out = steps_table(r);
  if (const CriticalStep* s = detail_step(r)) out += detail_table(*s, top);
  std::vector<WhatIfChange> asked = r.what_ifs;
  asked.insert(asked.end(), r.combined.begin(), r.combined.end());
  out += changes_table(asked, "what-if (mean over the steady steps)");
  out += changes_table(r.ranked,
                       "the changes that would gain most (ops at their roofline time "
                       "or half, categories at half, collectives overlapped, launches "
                       "free)");
  out += "\nassumptions (docs/critical-path.md):\n";
  for (const std::string& a : r.assumptions) out += "  - " + a + "\n";
  return out;
}

}  // namespace

std::string render_critical_path(const CriticalPathResult& result, OutputFormat format,
                                 size_t top) {
  return render_in(format, result, json, csv,
                   [top](const CriticalPathResult& r) { return table(r, top); });
}

}  // namespace jaxprof
