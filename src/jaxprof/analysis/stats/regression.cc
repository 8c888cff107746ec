#include "jaxprof/analysis/stats/regression.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>

#include "jaxprof/analysis/stats/welch_t_test.h"
#include "jaxprof/analysis/stats/significance.h"
#include "jaxprof/common/error.h"

namespace jaxprof {

const char* verdict_name(Verdict v) {
  switch (v) {
    case Verdict::kOk:
      return "ok";
    case Verdict::kRegression:
      return "regression";
    case Verdict::kInconclusive:
      return "inconclusive";
  }
  return "?";
}

namespace {

[[noreturn]] void usage(const std::string& what) { throw InputError("", what); }

std::string names(const ProfileSamples& s) {
  std::string out;
  for (const ModuleSamples& m : s.modules) out += (out.empty() ? "" : ", ") + m.name;
  return out.empty() ? "(none)" : out;
}

const ModuleSamples& need_module(const ProfileSamples& s, const std::string& name,
                                 const char* side) {
  const ModuleSamples* m = s.find(name);
  if (!m)
    usage(fmt::format("{} has no executions of module {} (modules: {})", side, name, names(s)));
  return *m;
}

// The program that takes the most device time per device in BASE: the training or serving step.
const ModuleSamples& step_module(const ProfileSamples& base) {
  const ModuleSamples* best = nullptr;
  double best_time = -1;
  for (const ModuleSamples& m : base.modules) {
    double t = m.devices ? static_cast<double>(m.total_ps) / static_cast<double>(m.devices) : 0;
    if (t > best_time) best = &m, best_time = t;
  }
  if (!best) usage("BASE has no XLA module executions to compare");
  return *best;
}

}  // namespace

namespace {

double mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? 0 : s / static_cast<double>(v.size());
}

double geometric_mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) {
    if (x <= 0) return 0;
    s += std::log(x);
  }
  return v.empty() ? 0 : std::exp(s / static_cast<double>(v.size()));
}

// The op of `module` whose change adds the most time to a run of it.
void find_top_op(const ProfileSamples& base, const ProfileSamples& now, const std::string& module,
                 CheckResult& r) {
  ProfileSamples b, n;
  if (const ModuleSamples* m = base.find(module)) b.modules.push_back(*m);
  if (const ModuleSamples* m = now.find(module)) n.modules.push_back(*m);
  DiffResult d = compute_diff(b, n);
  if (!d.modules.empty()) r.module_delta_ps = d.modules.front().delta_ps;
  for (const DiffRow& op : d.ops)
    if (op.delta_ps > 0 && (!r.top_op || op.delta_ps > r.top_op->delta_ps)) r.top_op = op;
}

}  // namespace

CheckResult check_regression(const ProfileSamples& base, const ProfileSamples& now,
                             const CheckOptions& o) {
  CheckResult r;
  const std::vector<double>* a = nullptr;
  const std::vector<double>* b = nullptr;
  const std::vector<size_t>* ac = nullptr;
  const std::vector<size_t>* bc = nullptr;
  std::string_view metric = o.metric;
  std::string why_not_steps = metric == "step" ? steps_unavailable(base.steps, now.steps) : "";
  if (metric == "step" && why_not_steps.empty()) {
    r.metric = fmt::format("step (wall time of the {} step marks)", base.steps.name);
    r.metric_source = "step-marks";
    r.unit = "steps";
    if (!base.modules.empty()) r.module = step_module(base).name;
    a = &base.steps.per_step;
    b = &now.steps.per_step;
    ac = &base.steps.captures;
    bc = &now.steps.captures;
  } else if (metric == "step" || metric.starts_with("module:")) {
    const ModuleSamples& mb = metric == "step"
                                  ? step_module(base)
                                  : need_module(base, std::string(metric.substr(7)), "BASE");
    const ModuleSamples& mn = need_module(now, mb.name, "NEW");
    if (metric == "step") {
      r.metric = fmt::format("step (module {}; {})", mb.name, why_not_steps);
      r.metric_source = "top-module";
      r.step_fallback = why_not_steps;
    } else {
      r.metric = "module " + mb.name;
    }
    r.module = mb.name;
    a = &mb.per_exec;
    b = &mn.per_exec;
    ac = &mb.captures;
    bc = &mn.captures;
  } else if (metric.starts_with("op:")) {
    std::string spec(metric.substr(3)), module, op = spec;
    if (auto slash = spec.find('/'); slash != std::string::npos)
      module = spec.substr(0, slash), op = spec.substr(slash + 1);
    const ModuleSamples* mb = nullptr;
    const OpSamples* ob = nullptr;
    std::vector<std::string> found_in;
    for (const ModuleSamples& m : base.modules) {
      if (!module.empty() && m.name != module) continue;
      for (const OpSamples& x : m.ops)
        if (x.name == op) {
          mb = &m, ob = &x;
          found_in.push_back(m.name);
        }
    }
    if (!ob) usage(fmt::format("BASE has no op {}", spec));
    if (found_in.size() > 1)
      usage(fmt::format("op {} is in several modules ({}): name one as op:MODULE/{}", op,
                        fmt::join(found_in, ", "), op));
    r.metric = fmt::format("op {}/{}", mb->name, ob->name);
    r.metric_source = "op";
    r.module = mb->name;
    a = &ob->per_exec;
    ac = &mb->captures;
    const ModuleSamples& mn = need_module(now, mb->name, "NEW");
    bc = &mn.captures;
    for (const OpMatch& m : match_ops(*mb, mn))
      if (m.base && &mb->ops[*m.base] == ob && m.now) b = &mn.ops[*m.now].per_exec;
    if (!b) {
      r.removed = true;
      r.verdict = Verdict::kOk;
      r.base_executions = a->size();
      r.base_median_ps = median(*a);
      return r;
    }
  } else {
    usage(fmt::format("--metric {}: expected step, module:NAME or op:NAME", o.metric));
  }

  r.base_executions = a->size();
  r.new_executions = b->size();
  double limit = 1.0 + o.max_regression;
  // Each bound of the (1 - 2 alpha) interval is a one-sided (1 - alpha) bound: the verdict reads
  // the bound on the limit's side, as the one-sided test at alpha does.
  Effect e = compare_samples(*a, *ac, *b, *bc, limit, 2 * o.alpha);
  r.test = e.test;
  r.interval_level = 1 - 2 * o.alpha;
  r.p_greater = e.p_greater;
  r.p_less = e.p_less;
  r.ratio = e.ratio;
  r.ratio_low = e.low;
  r.ratio_high = e.high;
  if (std::string_view(e.test) == "capture-t") {
    r.base_captures = e.base_n;
    r.new_captures = e.new_n;
    std::vector<double> ma = capture_medians(*a, *ac), mb = capture_medians(*b, *bc);
    r.base_median_ps = e.log_scale ? geometric_mean(ma) : mean(ma);
    r.new_median_ps = e.log_scale ? geometric_mean(mb) : mean(mb);
  } else {
    r.base_median_ps = median(*a);
    r.new_median_ps = median(*b);
  }
  if (e.p_greater < o.alpha)
    r.verdict = Verdict::kRegression;
  else if (e.p_less < o.alpha)
    r.verdict = Verdict::kOk;
  else
    r.more = more_samples_to_decide(e, limit, o.alpha);
  if (!metric.starts_with("op:") && !r.module.empty()) find_top_op(base, now, r.module, r);
  return r;
}

}  // namespace jaxprof
