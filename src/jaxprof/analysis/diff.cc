#include "jaxprof/analysis/diff.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "jaxprof/analysis/capture_test.h"
#include "jaxprof/analysis/category.h"
#include "jaxprof/analysis/module_executions.h"
#include "jaxprof/analysis/significance.h"

namespace jaxprof {

const char* change_name(Change c) {
  switch (c) {
    case Change::kSame:
      return "same";
    case Change::kSlower:
      return "slower";
    case Change::kFaster:
      return "faster";
    case Change::kAdded:
      return "added";
    case Change::kRemoved:
      return "removed";
  }
  return "?";
}

const ModuleSamples* ProfileSamples::find(std::string_view module) const {
  for (const ModuleSamples& m : modules)
    if (m.name == module) return &m;
  return nullptr;
}

namespace {

// Opcode, JAX op path, source line and category of op event `e`, as `ops` reports them.
void describe_op(const Profile& p, uint32_t plane, uint32_t e, OpSamples& op) {
  const ModuleKey& mk = p.modules[p.events.module[e]];
  if (p.events.hlo_op[e] != 0) {
    if (const HloModule* mod = p.hlo.find(hlo_program_key(mk.program_id), p.str(mk.name))) {
      if (const HloInstruction* instr = mod->find(op.name)) {
        op.opcode = std::string(instr->opcode);
        op.op_name = std::string(instr->op_name);
        op.source = mod->source_line(*instr);
      }
    }
    if (op.op_name.empty()) {
      // GPU kernels carry the JAX op path as the tf_op stat.
      if (auto v = p.event_stat(plane, e, "tf_op"); v && v->is_text()) {
        std::string_view path = v->str;
        if (path.ends_with(':')) path.remove_suffix(1);
        if (path.find('/') != std::string_view::npos) op.op_name = std::string(path);
      }
    }
  }
  op.category = category_name(op.opcode.empty() ? categorize({}, p.event_name(e))
                                                : categorize(op.opcode, op.name, op.op_name));
}

}  // namespace

ProfileSamples collect_samples(const Profile& p, const SteadyStateOptions& steady_options) {
  ProfileSamples out;
  const std::vector<DeviceExecutions>& all = module_executions(p);
  const SteadyState& roles = steady_state(p, steady_options);
  struct Exec {
    const ModuleExecution* x;
    uint32_t plane;
  };
  struct Build {
    std::vector<Exec> all;
    std::set<size_t> devices;
    std::set<ProgramId> programs;
  };
  std::map<std::string, Build> by_name;
  for (size_t di = 0; di < all.size(); ++di)
    for (size_t k = 0; k < all[di].executions.size(); ++k) {
      const ModuleExecution& x = all[di].executions[k];
      if (roles.roles[di][k] == ExecutionRole::kAutotuning && !steady_options.include_autotuning)
        continue;
      Build& b = by_name[x.name];
      b.all.push_back({&x, all[di].plane});
      b.devices.insert(di);
      b.programs.insert(x.program_id);
    }

  for (auto& [name, b] : by_name) {
    ModuleSamples m;
    m.name = name;
    m.devices = b.devices.size();
    if (b.programs.size() > 1)
      out.warnings.push_back(
          fmt::format("{} programs are named {}: their executions are compared as one module",
                      b.programs.size(), name));
    std::vector<Exec> steady;
    for (const Exec& x : b.all) {
      if (x.x->warmup)
        ++m.warmup_executions;
      else
        steady.push_back(x);
    }
    // A program run once per device has no steady state: compare its only runs.
    if (steady.empty()) steady = b.all;
    std::map<std::string, OpSamples> ops;
    for (size_t k = 0; k < steady.size(); ++k) {
      const ModuleExecution& x = *steady[k].x;
      m.per_exec.push_back(static_cast<double>(x.duration_ps()));
      m.total_ps += x.duration_ps();
      for (uint32_t e : x.events) {
        StringId op = p.events.hlo_op[e];
        std::string op_name(op ? p.str(op) : p.event_name(e));
        auto [it, inserted] = ops.try_emplace(op_name);
        OpSamples& s = it->second;
        if (inserted) {
          s.name = op_name;
          s.per_exec.assign(steady.size(), 0.0);
          describe_op(p, steady[k].plane, e, s);
        }
        int64_t d = p.events.duration_ps[e];
        ++s.events;
        s.total_ps += d;
        s.per_exec[k] += static_cast<double>(d);
      }
    }
    for (auto& [_, s] : ops) m.ops.push_back(std::move(s));
    m.captures = {m.per_exec.size()};
    out.modules.push_back(std::move(m));
  }
  out.steps = collect_step_samples(p);
  return out;
}

ProfileSamples pool_samples(std::vector<ProfileSamples> captures) {
  if (captures.size() == 1) return std::move(captures.front());
  ProfileSamples out;
  out.captures = captures.size();
  std::vector<StepSamples> steps;
  for (ProfileSamples& c : captures) steps.push_back(std::move(c.steps));
  out.steps = pool_step_samples(std::move(steps));
  std::map<std::string, ModuleSamples> modules;
  for (size_t c = 0; c < captures.size(); ++c) {
    for (const std::string& w : captures[c].warnings)
      out.warnings.push_back(fmt::format("capture {}: {}", c + 1, w));
    for (ModuleSamples& m : captures[c].modules) {
      auto [it, inserted] = modules.try_emplace(m.name);
      ModuleSamples& p = it->second;
      if (inserted) {
        p.name = m.name;
        p.captures.assign(captures.size(), 0);
      }
      size_t before = p.per_exec.size(), added = m.per_exec.size();
      p.devices += m.devices;
      p.warmup_executions += m.warmup_executions;
      p.total_ps += m.total_ps;
      p.per_exec.insert(p.per_exec.end(), m.per_exec.begin(), m.per_exec.end());
      p.captures[c] = added;
      std::map<std::string_view, OpSamples*> by_name;
      for (OpSamples& op : p.ops) by_name[op.name] = &op;
      std::vector<OpSamples> fresh;
      for (OpSamples& op : m.ops) {
        auto found = by_name.find(op.name);
        if (found == by_name.end()) {
          // An op new in this capture: 0 in the executions of the captures before it.
          op.per_exec.insert(op.per_exec.begin(), before, 0.0);
          fresh.push_back(std::move(op));
          continue;
        }
        OpSamples& q = *found->second;
        q.events += op.events;
        q.total_ps += op.total_ps;
        q.per_exec.insert(q.per_exec.end(), op.per_exec.begin(), op.per_exec.end());
      }
      for (OpSamples& op : fresh) p.ops.push_back(std::move(op));
      // Ops this capture lacks: 0 in its executions.
      for (OpSamples& op : p.ops) op.per_exec.resize(p.per_exec.size(), 0.0);
      std::sort(p.ops.begin(), p.ops.end(),
                [](const OpSamples& a, const OpSamples& b) { return a.name < b.name; });
    }
  }
  for (auto& [_, m] : modules) out.modules.push_back(std::move(m));
  return out;
}

std::vector<OpMatch> match_ops(const ModuleSamples& base, const ModuleSamples& now) {
  std::vector<OpMatch> out;
  std::vector<bool> base_used(base.ops.size()), now_used(now.ops.size());
  auto full_key = [](const OpSamples& o) { return std::tie(o.opcode, o.op_name, o.source); };
  auto add = [&](size_t b, size_t n, const char* how) {
    base_used[b] = now_used[n] = true;
    out.push_back({b, n, how});
  };
  // 1. Same name, unless the HLO metadata says they compute different things (fusion numbers
  //    shift when an op is added before them).
  std::map<std::string_view, size_t> now_by_name;
  for (size_t i = 0; i < now.ops.size(); ++i) now_by_name[now.ops[i].name] = i;
  for (size_t i = 0; i < base.ops.size(); ++i) {
    auto it = now_by_name.find(base.ops[i].name);
    if (it == now_by_name.end()) continue;
    const OpSamples &a = base.ops[i], &b = now.ops[it->second];
    bool both_known = !a.op_name.empty() && !b.op_name.empty();
    if (both_known && full_key(a) != full_key(b)) continue;
    add(i, it->second, "name");
  }
  // 2. and 3. What is left, by (opcode, op path, source), then (opcode, op path), when exactly
  //    one op on each side has the key.
  auto by_key = [&](bool with_source, const char* how) {
    using Key = std::tuple<std::string, std::string, std::string>;
    std::map<Key, std::vector<size_t>> kb, kn;
    auto key = [&](const OpSamples& o) {
      return Key{o.opcode, o.op_name, with_source ? o.source : std::string()};
    };
    for (size_t i = 0; i < base.ops.size(); ++i)
      if (!base_used[i] && !base.ops[i].op_name.empty()) kb[key(base.ops[i])].push_back(i);
    for (size_t i = 0; i < now.ops.size(); ++i)
      if (!now_used[i] && !now.ops[i].op_name.empty()) kn[key(now.ops[i])].push_back(i);
    for (const auto& [k, bs] : kb) {
      auto it = kn.find(k);
      if (bs.size() == 1 && it != kn.end() && it->second.size() == 1)
        add(bs[0], it->second[0], how);
    }
  };
  by_key(true, "opcode+op_name+source");
  by_key(false, "opcode+op_name");
  for (size_t i = 0; i < base.ops.size(); ++i)
    if (!base_used[i]) out.push_back({i, std::nullopt, ""});
  for (size_t i = 0; i < now.ops.size(); ++i)
    if (!now_used[i]) out.push_back({std::nullopt, i, ""});
  return out;
}

namespace {

double mean(const std::vector<double>& v) {
  if (v.empty()) return 0;
  double s = 0;
  for (double x : v) s += x;
  return s / static_cast<double>(v.size());
}

size_t with_executions(std::span<const size_t> captures) {
  return static_cast<size_t>(
      std::count_if(captures.begin(), captures.end(), [](size_t n) { return n > 0; }));
}

// Fills the numbers of a row from the per-execution samples of either side (null = absent),
// laid out per capture as `bc` and `nc` say.
void fill(DiffRow& r, const std::vector<double>* b, const std::vector<double>* n, int64_t b_total,
          int64_t n_total, double weight, std::span<const size_t> bc, std::span<const size_t> nc,
          const DiffOptions& o) {
  r.weight = weight;
  if (b) {
    r.base_executions = b->size();
    r.base_total_ps = b_total;
    r.base_mean_ps = mean(*b);
    r.base_median_ps = median(*b);
  }
  if (n) {
    r.new_executions = n->size();
    r.new_total_ps = n_total;
    r.new_mean_ps = mean(*n);
    r.new_median_ps = median(*n);
  }
  r.delta_ps = r.new_mean_ps - r.base_mean_ps;
  if (r.base_mean_ps > 0) r.ratio = r.new_mean_ps / r.base_mean_ps;
  r.contribution_ps = r.delta_ps * weight;
  if (!b) {
    r.change = Change::kAdded;
    return;
  }
  if (!n) {
    r.change = Change::kRemoved;
    return;
  }
  r.base_captures = with_executions(bc);
  r.new_captures = with_executions(nc);
  if (r.base_captures + r.new_captures > 2) {
    r.test = "capture-t";
    r.p_value = capture_t_test(capture_medians(*b, bc), capture_medians(*n, nc)).p_two_sided;
  } else {
    r.test = "mann-whitney";
    r.p_value = mann_whitney(*b, *n).p_two_sided;
  }
  r.shift_ps = hodges_lehmann_shift(*b, *n);
  bool large = !r.ratio || std::fabs(*r.ratio - 1.0) >= o.min_change;
  r.significant = *r.p_value < o.alpha && large && r.delta_ps != 0;
  r.change = !r.significant ? Change::kSame : r.delta_ps > 0 ? Change::kSlower : Change::kFaster;
}

void sort_by_contribution(std::vector<DiffRow>& rows) {
  std::stable_sort(rows.begin(), rows.end(), [](const DiffRow& a, const DiffRow& b) {
    double x = std::fabs(a.contribution_ps), y = std::fabs(b.contribution_ps);
    if (x != y) return x > y;
    return std::tie(a.module, a.name) < std::tie(b.module, b.name);
  });
}

// Per-execution time of each category of a module's ops.
std::map<std::string, std::pair<std::vector<double>, int64_t>> by_category(const ModuleSamples& m) {
  std::map<std::string, std::pair<std::vector<double>, int64_t>> out;
  for (const OpSamples& op : m.ops) {
    auto& [v, total] = out[op.category];
    v.resize(m.per_exec.size(), 0.0);
    for (size_t k = 0; k < op.per_exec.size(); ++k) v[k] += op.per_exec[k];
    total += op.total_ps;
  }
  return out;
}

}  // namespace

DiffResult compute_diff(const ProfileSamples& base, const ProfileSamples& now,
                        const DiffOptions& o) {
  DiffResult r;
  r.alpha = o.alpha;
  r.min_change = o.min_change;
  r.base_captures = base.captures;
  r.new_captures = now.captures;
  for (const std::string& w : base.warnings) r.warnings.push_back("BASE: " + w);
  for (const std::string& w : now.warnings) r.warnings.push_back("NEW: " + w);
  std::set<std::string> names;
  for (const ModuleSamples& m : base.modules) names.insert(m.name);
  for (const ModuleSamples& m : now.modules) names.insert(m.name);

  for (const std::string& name : names) {
    const ModuleSamples* mb = base.find(name);
    const ModuleSamples* mn = now.find(name);
    double w = mb ? mb->runs_per_device() : mn->runs_per_device();
    DiffRow& row = r.modules.emplace_back();
    row.module = row.name = name;
    std::span<const size_t> bc, nc;
    if (mb) bc = mb->captures;
    if (mn) nc = mn->captures;
    fill(row, mb ? &mb->per_exec : nullptr, mn ? &mn->per_exec : nullptr, mb ? mb->total_ps : 0,
         mn ? mn->total_ps : 0, w, bc, nc, o);
    r.base_total_ps += row.base_mean_ps * w;
    r.new_total_ps += row.new_mean_ps * w;

    auto op_row = [&](const OpSamples* a, const OpSamples* b, const std::string& how) {
      DiffRow& op = r.ops.emplace_back();
      const OpSamples& any = a ? *a : *b;
      op.module = name;
      op.name = any.name;
      if (a && b && a->name != b->name) op.new_name = b->name;
      op.matched_by = how;
      op.opcode = any.opcode;
      op.op_name = any.op_name;
      op.source = any.source;
      op.category = any.category;
      fill(op, a ? &a->per_exec : nullptr, b ? &b->per_exec : nullptr, a ? a->total_ps : 0,
           b ? b->total_ps : 0, w, bc, nc, o);
    };
    if (mb && mn) {
      for (const OpMatch& m : match_ops(*mb, *mn))
        op_row(m.base ? &mb->ops[*m.base] : nullptr, m.now ? &mn->ops[*m.now] : nullptr,
               m.matched_by);
    } else {
      for (const OpSamples& op : (mb ? mb : mn)->ops)
        op_row(mb ? &op : nullptr, mn ? &op : nullptr, "");
    }

    auto cb = mb ? by_category(*mb) : decltype(by_category(*mb)){};
    auto cn = mn ? by_category(*mn) : decltype(by_category(*mn)){};
    std::set<std::string> cats;
    for (auto& [c, _] : cb) cats.insert(c);
    for (auto& [c, _] : cn) cats.insert(c);
    for (const std::string& c : cats) {
      auto ib = cb.find(c), in = cn.find(c);
      DiffRow& cr = r.categories.emplace_back();
      cr.module = name;
      cr.name = cr.category = c;
      fill(cr, ib != cb.end() ? &ib->second.first : nullptr,
           in != cn.end() ? &in->second.first : nullptr, ib != cb.end() ? ib->second.second : 0,
           in != cn.end() ? in->second.second : 0, w, bc, nc, o);
    }
  }
  r.step_unavailable = steps_unavailable(base.steps, now.steps);
  if (r.step_unavailable.empty()) {
    DiffRow& row = r.step.emplace();
    row.name = base.steps.name;
    auto total = [](const std::vector<double>& v) {
      double t = 0;
      for (double x : v) t += x;
      return static_cast<int64_t>(t);
    };
    fill(row, &base.steps.per_step, &now.steps.per_step, total(base.steps.per_step),
         total(now.steps.per_step), 0, base.steps.captures, now.steps.captures, o);
  }
  r.delta_ps = r.new_total_ps - r.base_total_ps;
  sort_by_contribution(r.modules);
  sort_by_contribution(r.ops);
  sort_by_contribution(r.categories);
  r.explained_top = std::min(o.top, r.ops.size());
  double running = 0;
  for (size_t i = 0; i < r.ops.size(); ++i) {
    running += r.ops[i].contribution_ps;
    if (i < r.explained_top) r.explained_ps = running;
    if (r.delta_ps != 0) r.ops[i].cumulative_share = running / r.delta_ps;
  }
  if (r.delta_ps != 0) r.explained_share = r.explained_ps / r.delta_ps;
  return r;
}

}  // namespace jaxprof
