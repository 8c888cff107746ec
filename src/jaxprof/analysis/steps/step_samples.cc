#include "jaxprof/analysis/steps/step_samples.h"

#include <fmt/format.h>

#include <map>

#include "jaxprof/analysis/steps/steps.h"

namespace jaxprof {

StepSamples collect_step_samples(const Profile& profile) {
  return step_samples_from(compute_steps(profile));
}

StepSamples step_samples_from(StepsResult r) {
  StepSamples out;
  // Only the program's own marks span the host work around a step; steps read from device
  // marks (Steps lines, group ids) cover device work alone, which the module metric already has.
  if (r.source != "host-annotation") r.steps.clear();
  out.marked = r.steps.size();
  out.captures = {0};
  if (r.steps.empty()) return out;
  std::map<std::string, size_t> names;
  bool any_steady = false;
  for (const Step& s : r.steps) {
    ++names[s.name];
    any_steady = any_steady || !s.warmup;
  }
  for (const auto& [name, n] : names)
    if (out.name.empty() || n > names[out.name]) out.name = name;
  // As the steps analysis: warm-up steps are left out unless every step is one.
  size_t with_work = 0, waited = 0;
  for (const Step& s : r.steps) {
    if (any_steady && s.warmup) {
      ++out.warmup;
      continue;
    }
    out.per_step.push_back(static_cast<double>(s.duration_ps()));
    if (s.executions == 0) continue;
    ++with_work;
    // The device clock may be aligned to the host's with some skew: allow 5% of the step.
    if (s.device_end_ps <= s.end_ps + s.duration_ps() / 20) ++waited;
  }
  out.captures = {out.per_step.size()};
  out.unusable.clear();
  if (with_work == 0)
    out.unusable = "no module executions inside the step marks";
  else if (2 * waited < with_work)
    out.unusable = "the step marks end before their device work";
  return out;
}

StepSamples pool_step_samples(std::vector<StepSamples> captures) {
  if (captures.size() == 1) return std::move(captures.front());
  StepSamples out;
  out.unusable.clear();
  std::map<std::string, size_t> names;
  for (size_t c = 0; c < captures.size(); ++c) {
    StepSamples& s = captures[c];
    if (!s.name.empty()) names[s.name] += s.per_step.size();
    out.per_step.insert(out.per_step.end(), s.per_step.begin(), s.per_step.end());
    out.captures.push_back(s.per_step.size());
    out.marked += s.marked;
    out.warmup += s.warmup;
    if (out.unusable.empty() && !s.usable()) {
      out.unusable = s.unusable;
      out.unusable_capture = c + 1;
    }
  }
  for (const auto& [name, n] : names)
    if (out.name.empty() || n > names[out.name]) out.name = name;
  // Every capture for the same reason: the side's reason, with no capture to name.
  bool all = true;
  for (const StepSamples& s : captures) all = all && s.unusable == out.unusable;
  if (all) out.unusable_capture = 0;
  return out;
}

std::string steps_unavailable(const StepSamples& base, const StepSamples& now) {
  auto where = [](const StepSamples& s, const char* side) {
    return s.unusable_capture ? fmt::format("{} capture {}", side, s.unusable_capture)
                              : std::string(side);
  };
  if (base.usable() && now.usable()) return "";
  if (!now.usable() && base.usable()) return now.unusable + " in " + where(now, "NEW");
  if (!base.usable() && now.usable()) return base.unusable + " in " + where(base, "BASE");
  if (base.unusable == now.unusable && !base.unusable_capture && !now.unusable_capture)
    return base.unusable + " in BASE and NEW";
  return fmt::format("{} in {}, {} in {}", base.unusable, where(base, "BASE"), now.unusable,
                     where(now, "NEW"));
}

}  // namespace jaxprof
