#include "jaxprof/analysis/regression.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>

#include "jaxprof/analysis/capture_test.h"
#include "jaxprof/error.h"

namespace jaxprof {

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

size_t with_executions(const std::vector<size_t>& captures) {
  return static_cast<size_t>(
      std::count_if(captures.begin(), captures.end(), [](size_t n) { return n > 0; }));
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
      r.base_executions = a->size();
      r.base_median_ps = median(*a);
      return r;
    }
  } else {
    usage(fmt::format("--metric {}: expected step, module:NAME or op:NAME", o.metric));
  }

  r.base_executions = a->size();
  r.new_executions = b->size();
  r.base_captures = std::max<size_t>(1, with_executions(*ac));
  r.new_captures = std::max<size_t>(1, with_executions(*bc));
  double limit = 1.0 + o.max_regression;
  if (r.base_captures + r.new_captures > 2) {
    // Several processes: the captures are the samples.
    std::vector<double> ma = capture_medians(*a, *ac), mb = capture_medians(*b, *bc);
    CaptureTest t = capture_t_test(ma, mb, limit);
    r.test = "capture-t";
    r.tested = t.tested;
    r.p_value = t.p_greater;
    r.base_median_ps = geometric_mean(ma);
    r.new_median_ps = geometric_mean(mb);
    if (t.log_scale) {
      r.ratio = t.ratio;
      r.ratio_ci = {t.ratio_low, t.ratio_high};
    } else {
      // Some capture's median is 0 (an op that mostly did not run): compare mean medians.
      double sa = 0, sb = 0;
      for (double x : ma) sa += x;
      for (double x : mb) sb += x;
      sa /= static_cast<double>(ma.size());
      sb /= static_cast<double>(mb.size());
      r.base_median_ps = sa;
      r.new_median_ps = sb;
      if (sa > 0) r.ratio = sb / sa;
    }
  } else {
    r.base_median_ps = median(*a);
    r.new_median_ps = median(*b);
    if (r.base_median_ps > 0) r.ratio = r.new_median_ps / r.base_median_ps;
    r.ratio_ci = bootstrap_median_ratio(*a, *b);
    r.tested = a->size() >= 3 && b->size() >= 3;
    if (r.tested) {
      std::vector<double> scaled(*a);
      for (double& x : scaled) x *= limit;
      r.p_value = mann_whitney(scaled, *b).p_greater;
    }
  }
  bool over = r.ratio ? *r.ratio > limit : r.new_median_ps > 0;
  r.regression = r.tested ? over && r.p_value < o.alpha : over;
  if (!metric.starts_with("op:") && !r.module.empty()) find_top_op(base, now, r.module, r);
  return r;
}

}  // namespace jaxprof
