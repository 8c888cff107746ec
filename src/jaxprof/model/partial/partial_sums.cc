#include "jaxprof/model/partial/partial_sums.h"

#include <fmt/format.h>

#include "jaxprof/common/error.h"
#include "jaxprof/model/partial/partial.h"
#include "jaxprof/model/time_range.h"

namespace jaxprof {
namespace {

const char* kind_name(PartialSums::Kind k) {
  switch (k) {
    case PartialSums::kOpTime:
      return "op times";
    case PartialSums::kDeviceTime:
      return "device times";
    case PartialSums::kExecutionTime:
      return "module execution times";
    case PartialSums::kCollectiveTime:
      return "collective times";
    case PartialSums::kKernelTime:
      return "kernel times";
    case PartialSums::kFlameTime:
      return "flamegraph weights";
    case PartialSums::kCompileTime:
      return "compile times";
    case PartialSums::kStepTime:
      return "step times";
    case PartialSums::kSetApartTime:
      return "times set apart";
    case PartialSums::kKinds:
      break;
  }
  return "?";
}

[[noreturn]] void overflow(const HostPartial& h, const char* what) {
  throw InputError(h.partial_file.empty() ? h.path : h.partial_file,
                   fmt::format("the {} of host {} and the hosts before it sum past 2^63 ps: the "
                               "set is too large to sum exactly (or the file is damaged)",
                               what, h.host));
}

}  // namespace

void PartialSums::add(const HostPartial& h) {
  std::array<int64_t, kKinds> totals = totals_;
  std::array<int64_t, kDeviceFigures> device = device_;
  unsigned __int128 sum_sq = op_sum_sq_;
  uint64_t counts = counts_;
  auto add = [&](Kind k, int64_t v) {
    if (v == INT64_MIN || !checked_add(totals[k], v < 0 ? -v : v, totals[k]))
      overflow(h, kind_name(k));
  };
  auto count = [&](uint64_t n) {
    if (__builtin_add_overflow(counts, n, &counts)) overflow(h, "op event counts");
  };
  for (const PartialDevice& d : h.devices) {
    count(d.op_events);
    for (const PartialOpGroup& g : d.op_groups) {
      add(kOpTime, g.duration.sum);
      add(kOpTime, g.self_ps);
      count(g.duration.count);
      if (__builtin_add_overflow(sum_sq, g.duration.sum_sq, &sum_sq))
        overflow(h, "op times' squares");
    }
    // Each of a device's figures is summed over the devices on its own (the busy time of every
    // device, their spans, ...), so each has its own total: one total of all thirteen refused a
    // single host's 5 GB TPU capture of 6.9 days (4 devices), and 1,000 hosts of 8 devices
    // past 4 minutes.
    const DeviceTimeline& t = d.timeline;
    const int64_t figures[kDeviceFigures] = {d.op_busy_ps,
                                             d.op_span_ps,
                                             t.span_ps,
                                             t.busy_ps,
                                             t.compute_ps,
                                             t.comm_ps,
                                             t.comm_exposed_ps,
                                             t.memcpy_ps,
                                             t.memcpy_exposed_ps,
                                             t.set_apart_ps,
                                             t.idle_ps,
                                             t.idle_in_modules_ps,
                                             t.idle_between_modules_ps};
    for (size_t f = 0; f < kDeviceFigures; ++f) {
      const int64_t v = figures[f];
      if (v == INT64_MIN || !checked_add(device[f], v < 0 ? -v : v, device[f]))
        overflow(h, kind_name(kDeviceTime));
    }
    for (const PartialExecution& e : d.executions) {
      int64_t length;
      if (!checked_sub(e.end_ps, e.start_ps, length)) overflow(h, "module execution times");
      add(kExecutionTime, length);
    }
    for (const PartialExecutionOp& o : d.execution_ops) add(kExecutionTime, o.total_ps);
    for (const PartialCollectiveExecution& e : d.collective_executions) {
      int64_t length;
      if (!checked_sub(e.end_ps, e.begin_ps, length)) overflow(h, "collective times");
      add(kCollectiveTime, length);
      add(kCollectiveTime, e.duration_ps);
      add(kCollectiveTime, e.exposed_ps);
    }
    const PartialFlame& f = d.flame;
    for (int64_t v : {f.busy_ps, f.span_ps, f.idle_during_modules_ps, f.idle_between_modules_ps,
                      f.set_apart_ps})
      add(kFlameTime, v);
    for (const auto& frames : f.by)
      for (const PartialFlameFrame& fr : frames) add(kFlameTime, fr.self_ps);
  }
  for (const PartialKernelDevice& d : h.kernels.devices)
    for (const PartialKernel& k : d.kernels) {
      add(kKernelTime, k.total_ps);
      for (const PartialKernelConfig& c : k.configs) add(kKernelTime, c.total_ps);
      for (const PartialKernelOp& op : k.ops) add(kKernelTime, op.total_ps);
    }
  for (const CompileRecord& r : h.compile.records) {
    add(kCompileTime, r.wall_ps);
    add(kCompileTime, r.worker_busy_ps);
    for (const CompilePhaseTime& p : r.phases) {
      add(kCompileTime, p.wall_ps);
      add(kCompileTime, p.thread_ps);
    }
    for (const CompileStepTime& s : r.steps) {
      add(kCompileTime, s.wall_ps);
      add(kCompileTime, s.thread_ps);
    }
  }
  for (const PartialStep& s : h.steps.steps) {
    int64_t length;
    if (!checked_sub(s.end_ps, s.start_ps, length)) overflow(h, "step times");
    add(kStepTime, length);
    add(kStepTime, s.longest_window_ps);
  }
  add(kSetApartTime, h.steady.all_execution_ps);
  add(kSetApartTime, h.steady.autotuning.execution_ps);
  add(kSetApartTime, h.steady.warmup.execution_ps);
  totals_ = totals;
  device_ = device;
  op_sum_sq_ = sum_sq;
  counts_ = counts;
}

}  // namespace jaxprof
