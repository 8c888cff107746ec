#include "jaxprof/render/text/steady_state_render.h"

#include <fmt/format.h>

#include "jaxprof/common/units.h"
#include "jaxprof/render/text/text.h"

namespace jaxprof {

namespace {

double share_of(int64_t part, int64_t whole) {
  return whole > 0 ? static_cast<double>(part) / static_cast<double>(whole) : 0;
}

std::string work_line(const char* what, const SetApartWork& w, int64_t all_ps) {
  std::string modules;
  if (w.modules.size() <= 3) {
    for (const std::string& m : w.modules) modules += (modules.empty() ? "" : ", ") + m;
  } else {
    modules = fmt::format("{} modules", w.modules.size());
  }
  return fmt::format("{} {} execution{} of {} ({}, {} of execution time)", what, w.executions,
                     w.executions == 1 ? "" : "s", modules,
                     human_duration(static_cast<double>(w.execution_ps)),
                     human_percent(share_of(w.execution_ps, all_ps)));
}

std::string work_json(const SetApartWork& w, bool counted, int64_t all_ps) {
  std::string modules;
  for (const std::string& m : w.modules) modules += (modules.empty() ? "" : ", ") + json_string(m);
  return fmt::format(
      "{{\"counted\": {}, \"executions\": {}, \"op_events\": {}, \"execution_ns\": {}, "
      "\"share\": {}, \"modules\": [{}]}}",
      counted ? "true" : "false", w.executions, w.op_events, ps_to_ns_exact(w.execution_ps),
      number(share_of(w.execution_ps, all_ps)), modules);
}

}  // namespace

std::string render_set_apart_line(const SetApartSummary& s) {
  std::string parts;
  std::string flags;
  auto add = [&](const std::string& part, const char* flag) {
    parts += (parts.empty() ? "" : "; ") + part;
    flags += (flags.empty() ? "" : ", ") + std::string(flag);
  };
  if (!s.options.include_autotuning && s.autotuning.executions > 0)
    add(work_line("autotuning", s.autotuning, s.all_execution_ps), "--include-autotuning");
  bool warmup = !s.options.include_warmup && s.warmup.executions > 0;
  bool compiling = !s.options.include_warmup && s.with_compiles && s.compiles > 0;
  if (warmup) add(work_line("warm-up", s.warmup, s.all_execution_ps), "--include-warmup");
  if (compiling) {
    std::string part = fmt::format("compiling {} compile{} ({} of host time)", s.compiles,
                                   s.compiles == 1 ? "" : "s",
                                   human_duration(static_cast<double>(s.compile_wall_ps)));
    if (warmup)
      parts += "; " + part;
    else
      add(part, "--include-warmup");
  }
  if (parts.empty()) return {};
  return "set apart from the steady state: " + parts + " (" + flags + " count" +
         (flags.find(',') == std::string::npos ? "s" : "") + " " +
         (flags.find(',') == std::string::npos ? "it" : "them") + ")";
}

std::string render_set_apart_json(const SetApartSummary& s) {
  std::string out = fmt::format(
      "{{\"include_autotuning\": {}, \"include_warmup\": {}, \"autotuning\": {}, \"warmup\": {}",
      s.options.include_autotuning ? "true" : "false", s.options.include_warmup ? "true" : "false",
      work_json(s.autotuning, s.options.include_autotuning, s.all_execution_ps),
      work_json(s.warmup, s.options.include_warmup, s.all_execution_ps));
  if (s.with_compiles)
    out += fmt::format(", \"compiling\": {{\"counted\": {}, \"compiles\": {}, \"wall_ns\": {}}}",
                       s.options.include_warmup ? "true" : "false", s.compiles,
                       ps_to_ns_exact(s.compile_wall_ps));
  return out + "}";
}

}  // namespace jaxprof
