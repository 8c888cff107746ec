// Module executions into host partials: each execution's module, span and run id, and per
// execution the summed time of each of its ops (what `modules` reports as varying ops and what
// diff and check compare).
#include <algorithm>
#include <memory>
#include <string>
#include <unordered_map>

#include "jaxprof/analysis/ops/memory_op.h"
#include "jaxprof/analysis/partial/partial_build.h"
#include "jaxprof/analysis/steps/module_executions.h"

namespace jaxprof {

namespace {

// Opcode, JAX op path, source line and category of op event `e`, as diff reports them.
PartialOpInfo describe_execution_op(const Profile& p, uint32_t plane, uint32_t e, bool memory,
                                    HostPartial& h) {
  OpDescription d = describe_op_event(p, plane, e, memory);
  return {h.strings.id(d.opcode), h.strings.id(d.op_name), h.strings.id(d.source),
          h.strings.id(d.category)};
}

// Whether an op event of one plane is a copy or fill by its own evidence (its stats, its line):
// the line found from the event's index, each line's rule made once.
class PlaneMemoryOps {
 public:
  PlaneMemoryOps(const Profile& p, uint32_t plane) : p_(p) {
    for (uint32_t li : p.planes[plane].lines)
      if (p.lines[li].event_count > 0) starts_.push_back({p.lines[li].first_event, li});
    std::sort(starts_.begin(), starts_.end());
    rules_.resize(starts_.size());
  }
  bool operator()(uint32_t e) {
    auto it = std::upper_bound(starts_.begin(), starts_.end(), std::make_pair(e, UINT32_MAX));
    if (it == starts_.begin()) return false;
    size_t k = static_cast<size_t>(it - starts_.begin()) - 1;
    if (!rules_[k]) rules_[k] = std::make_unique<LineMemoryOps>(p_, starts_[k].second);
    return !rules_[k]->never() && (*rules_[k])(e) != MemoryOp::kNone;
  }

 private:
  const Profile& p_;
  std::vector<std::pair<uint32_t, uint32_t>> starts_;  // (first event, line)
  std::vector<std::unique_ptr<LineMemoryOps>> rules_;
};

// Said once per host: what the host-thread rule (module_executions.cc) cannot know.
void warn_host_thread_runs(HostPartial& h) {
  const std::string warning =
      h.path +
      ": the CPU op events carry no run_id or device_ordinal (JAX 0.4.33 to 0.6.1 write them so): "
      "the CPU devices read as one, module executions are told apart per host thread, and "
      "warm-up is judged per program, not per device (docs/modules.md)";
  if (std::find(h.warnings.begin(), h.warnings.end(), warning) == h.warnings.end())
    h.warnings.push_back(warning);
}

}  // namespace

void extract_executions(PartialBuild& b, bool ops) {
  const Profile& p = b.p;
  const std::vector<DeviceExecutions>& all = module_executions(p);
  for (size_t di = 0; di < all.size() && di < b.devices.size(); ++di) {
    const DeviceExecutions& d = all[di];
    PartialDevice& out = b.device(di);
    HostPartial& h = b.host_of(di);
    const int64_t shift = b.device_shift_ps(di);
    out.execution_source = d.source;
    if (d.source == ExecutionSource::kHostThread) warn_host_thread_runs(h);
    std::unordered_map<StringId, uint32_t> slot;  // op name -> index in this execution
    PlaneMemoryOps memory(p, d.plane);
    for (const ModuleExecution& x : d.executions) {
      PartialExecution& e = out.executions.emplace_back();
      e.module = h.module_id(x.name, x.program_id);
      e.run_id = x.run_id;
      e.start_ps = x.start_ps - shift;
      e.end_ps = x.end_ps - shift;
      e.warmup = x.warmup;
      e.events = x.events.size();
      if (!ops) continue;
      e.first_op = static_cast<uint32_t>(out.execution_ops.size());
      slot.clear();
      for (uint32_t ev : x.events) {
        StringId op = p.events.hlo_op[ev];
        StringId name = op ? op : p.event_metadata[p.events.metadata[ev]].name;
        auto [it, added] = slot.try_emplace(name, static_cast<uint32_t>(out.execution_ops.size()));
        if (added) {
          PartialExecutionOp& o = out.execution_ops.emplace_back();
          o.name = h.strings.id(p.str(name));
          o.info = h.op_info_id(describe_execution_op(p, d.plane, ev, memory(ev), h));
        }
        PartialExecutionOp& o = out.execution_ops[it->second];
        o.total_ps += p.op_duration_ps(ev);  // on the device clock where the event carries it
        ++o.events;
      }
      e.ops = static_cast<uint32_t>(out.execution_ops.size()) - e.first_op;
    }
  }
}

}  // namespace jaxprof
