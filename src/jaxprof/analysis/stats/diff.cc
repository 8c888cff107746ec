#include "jaxprof/analysis/stats/diff.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>

#include "jaxprof/analysis/partial/extract_partials.h"
#include "jaxprof/analysis/stats/effect.h"
#include "jaxprof/analysis/stats/significance.h"
#include "jaxprof/analysis/steps/steps.h"
#include "jaxprof/model/partial/partial.h"

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
    case Change::kUnclear:
      return "unclear";
  }
  return "?";
}

const ModuleSamples* ProfileSamples::find(std::string_view module) const {
  for (const ModuleSamples& m : modules)
    if (m.name == module) return &m;
  return nullptr;
}

namespace {

// What the samples need of an op, as its first occurrence says.
struct OpFacts {
  std::string opcode, op_name, source, category;
};

// One module's executions as read host by host: each execution's duration and its ops (ids into
// the module's op names), copied out of its host before the next host is decoded.
struct ModuleBuild {
  struct Exec {
    int64_t duration_ps;
    bool warmup;
    uint32_t first, count;  // range in `ops`
  };
  struct ExecOp {
    uint32_t id;
    uint32_t events;
    int64_t total_ps;
  };
  std::vector<Exec> execs;
  std::vector<ExecOp> ops;
  std::set<size_t> devices;
  std::set<ProgramId> programs;
  std::unordered_map<std::string, uint32_t> id_of;
  std::vector<std::string> names;
  // Per op: its facts at its first occurrence in any execution and in a steady one.
  std::vector<OpFacts> first_any, first_steady;
  std::vector<uint8_t> seen_steady;
};

ModuleSamples module_samples(const std::string& name, ModuleBuild& b) {
  ModuleSamples m;
  m.name = name;
  m.devices = b.devices.size();
  std::vector<const ModuleBuild::Exec*> steady;
  for (const ModuleBuild::Exec& x : b.execs) {
    if (x.warmup)
      ++m.warmup_executions;
    else
      steady.push_back(&x);
  }
  // A program run once per device has no steady state: compare its only runs.
  const bool only_warmup = steady.empty();
  if (only_warmup)
    for (const ModuleBuild::Exec& x : b.execs) steady.push_back(&x);
  std::map<std::string, OpSamples> ops;
  for (size_t k = 0; k < steady.size(); ++k) {
    const ModuleBuild::Exec& x = *steady[k];
    m.per_exec.push_back(static_cast<double>(x.duration_ps));
    m.total_ps += x.duration_ps;
    for (uint32_t i = x.first; i < x.first + x.count; ++i) {
      const ModuleBuild::ExecOp& o = b.ops[i];
      auto [it, inserted] = ops.try_emplace(b.names[o.id]);
      OpSamples& s = it->second;
      if (inserted) {
        s.name = it->first;
        s.per_exec.assign(steady.size(), 0.0);
        const OpFacts& f = only_warmup ? b.first_any[o.id] : b.first_steady[o.id];
        s.opcode = f.opcode;
        s.op_name = f.op_name;
        s.source = f.source;
        s.category = f.category;
      }
      s.events += o.events;
      s.total_ps += o.total_ps;
      s.per_exec[k] += static_cast<double>(o.total_ps);
    }
  }
  for (auto& [_, s] : ops) m.ops.push_back(std::move(s));
  m.captures = {m.per_exec.size()};
  return m;
}

}  // namespace

ProfileSamples samples_from_partials(const PartialSet& set, const SteadyStateOptions& steady) {
  set.require(kPartExecutions | kPartExecutionOps | kPartSteps, "diff");
  set.require_steady(steady, "diff");
  ProfileSamples out;
  // Host by host: each execution's figures are copied out before the next host is decoded, so
  // a set of stored hosts is never decoded whole (1,000 hosts held 35 MB of decoded partials).
  std::map<std::string, ModuleBuild> by_name;
  size_t di = 0;
  set.for_each_device(
      [&](const PartialSet::DeviceRef&, const HostPartial& h, const PartialDevice& d) {
        for (const PartialExecution& x : d.executions) {
          if (x.role == ExecutionRole::kAutotuning && !steady.include_autotuning) continue;
          ModuleBuild& b = by_name[std::string(h.module_name(x.module))];
          b.devices.insert(di);
          b.programs.insert(h.modules[x.module].program_id);
          b.execs.push_back(
              {x.end_ps - x.start_ps, x.warmup, static_cast<uint32_t>(b.ops.size()), x.ops});
          for (uint32_t i = x.first_op; i < x.first_op + x.ops; ++i) {
            const PartialExecutionOp& o = d.execution_ops[i];
            auto [it, added] = b.id_of.try_emplace(std::string(h.str(o.name)),
                                                   static_cast<uint32_t>(b.names.size()));
            const uint32_t id = it->second;
            auto facts = [&] {
              const PartialOpInfo& info = h.op_infos[o.info];
              return OpFacts{std::string(h.str(info.opcode)), std::string(h.str(info.op_name)),
                             std::string(h.str(info.source)), std::string(h.str(info.category))};
            };
            if (added) {
              b.names.push_back(it->first);
              b.first_any.push_back(facts());
              b.first_steady.emplace_back();
              b.seen_steady.push_back(0);
            }
            if (!x.warmup && !b.seen_steady[id]) {
              b.first_steady[id] = facts();
              b.seen_steady[id] = 1;
            }
            b.ops.push_back({id, o.events, o.total_ps});
          }
        }
        ++di;
      },
      kPartExecutions | kPartExecutionOps);

  for (auto& [name, b] : by_name) {
    if (b.programs.size() > 1)
      out.warnings.push_back(
          fmt::format("{} programs are named {}: their executions are compared as one module",
                      b.programs.size(), name));
    out.modules.push_back(module_samples(name, b));
    b = ModuleBuild{};  // its executions are samples now
  }
  out.steps = step_samples_from(steps_from_partials(set, /*modules=*/false));
  return out;
}

ProfileSamples collect_samples(const Profile& p, const SteadyStateOptions& steady) {
  PartialExtractOptions extract;
  extract.parts = kPartExecutions | kPartExecutionOps | kPartSteps;
  extract.steady = steady;
  return samples_from_partials(PartialSet(extract_partials(p, extract)), steady);
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
  r.contribution_ps = r.delta_ps * weight;
  if (!b) {
    r.change = Change::kAdded;
    return;
  }
  if (!n) {
    r.change = Change::kRemoved;
    return;
  }
  Effect e = compare_samples(*b, bc, *n, nc, 1.0, o.alpha);
  r.test = e.test;
  r.base_captures = e.test == std::string_view("capture-t") ? e.base_n : 1;
  r.new_captures = e.test == std::string_view("capture-t") ? e.new_n : 1;
  r.p_value = e.p_two_sided;
  r.ratio = e.ratio;
  r.ratio_low = e.low;
  r.ratio_high = e.high;
  r.shift_ps = hodges_lehmann_shift(*b, *n);
  double moved = r.ratio ? *r.ratio - 1 : 0;
  r.significant = *r.p_value < o.alpha && std::fabs(moved) >= o.min_change && moved != 0;
  if (r.significant)
    r.change = moved > 0 ? Change::kSlower : Change::kFaster;
  else if (!r.ratio || (r.ratio_low >= 1 - o.min_change && r.ratio_high <= 1 + o.min_change))
    r.change = Change::kSame;
  else
    r.change = Change::kUnclear;
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
  auto add = [](Contributions& c, double ps) { (ps > 0 ? c.slower_ps : c.faster_ps) += ps; };
  for (size_t i = 0; i < r.ops.size(); ++i) {
    add(r.ops_change, r.ops[i].contribution_ps);
    if (i < r.explained_top) add(r.explained, r.ops[i].contribution_ps);
  }
  double gross = r.ops_change.gross_ps(), running = 0;
  for (DiffRow& op : r.ops) {
    running += std::fabs(op.contribution_ps);
    if (gross > 0) op.cumulative_share = std::min(1.0, running / gross);
  }
  if (gross > 0) r.explained_share = std::min(1.0, r.explained.gross_ps() / gross);
  return r;
}

}  // namespace jaxprof
