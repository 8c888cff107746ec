// What a host's records may hold, checked once the host is read: every index points inside its
// table, and every time, duration and count is within what a capture can hold: times within the
// model's own range (kMaxTimePs, model/time_range.h: whatever a profile holds, its partial
// holds), totals within 2^61 ps, so that sums stay within int64. The first fault found is the one reported, so
// the order of the checks is part of the format's messages.
#include <fmt/format.h>

#include "jaxprof/formats/partial/partial_io.h"
#include "jaxprof/model/time_range.h"

namespace jaxprof::partial_io {

namespace {

constexpr int64_t kTime = kMaxTimePs;
constexpr int64_t kTotal = int64_t{1} << 61;

void check_time(const Decoder& in, int64_t t) {
  if (t < -kTime || t > kTime) in.bad(fmt::format("a time out of range ({} ps)", t));
}

void check_count(const Decoder& in, uint64_t n) {
  if (n > (uint64_t{1} << 40)) in.bad(fmt::format("a count out of range ({})", n));
}

// The times and counts of the devices, steps and compiles, and the host's clock zero.
void check_ranges(const Decoder& in, const HostPartial& h) {
  auto time = [&](int64_t t) { check_time(in, t); };
  auto count = [&](uint64_t n) { check_count(in, n); };
  for (const PartialDevice& d : h.devices) {
    const DeviceTimeline& t = d.timeline;
    time(d.op_busy_ps);
    time(d.op_span_ps);
    for (int64_t DeviceTimeline::*v : kTimelineTimes) time(t.*v);
    time(t.set_apart_ps);
    for (uint64_t n : {d.op_events, d.op_selected, d.op_device_clock_events, d.op_set_apart,
                       t.events, t.executions})
      count(n);
    if (d.op_device_clock_events > d.op_events)
      in.bad("more op events on the device clock than op events");
    for (const PartialOpGroup& g : d.op_groups) {
      count(g.duration.count);
      count(g.first);
      for (int64_t v : {g.duration.min, g.duration.max, g.self_ps}) time(v);
      if (g.duration.sum < -kTotal || g.duration.sum > kTotal)
        in.bad("an op group's total is out of range");
    }
    for (const PartialExecution& e : d.executions) {
      time(e.start_ps);
      time(e.end_ps);
      count(e.events);
    }
    for (const PartialExecutionOp& o : d.execution_ops) time(o.total_ps);
    for (const PartialCollectiveExecution& e : d.collective_executions) {
      time(e.begin_ps);
      time(e.end_ps);
      time(e.exposed_ps);
      time(e.duration_ps);
      if (e.end_ps < e.begin_ps) in.bad("a collective execution ends before it starts");
    }
    for (const PartialCollectiveOp& op : d.collective_ops) count(op.message_bytes >> 20);
  }
  for (const PartialStep& st : h.steps.steps)
    for (int64_t v : {st.start_ps, st.end_ps, st.longest_window_ps}) time(v);
  for (const PartialStepWindow& w : h.steps.windows) {
    time(w.start_ps);
    time(w.end_ps);
  }
  for (const CompileRecord& r : h.compile.records) {
    for (int64_t v : {r.start_ps, r.wall_ps, r.worker_busy_ps}) time(v);
    count(r.events);
    for (const CompilePhaseTime& ph : r.phases) {
      time(ph.wall_ps);
      time(ph.thread_ps);
    }
    for (const CompileStepTime& st : r.steps) {
      time(st.wall_ps);
      time(st.thread_ps);
      count(st.count);
    }
  }
  count(h.compile.unattributed);
  // Clock zeros are nanoseconds since an epoch: bounded so that two hosts' difference fits.
  if (h.base_ns < -(int64_t{1} << 61) || h.base_ns > (int64_t{1} << 62))
    in.bad("the host's clock zero is out of range");
}

// Every index into the string, module and op-info tables, with what the flames and kernels hold
// beside their indices.
void check_tables(const Decoder& in, const HostPartial& h, uint32_t parts) {
  auto time = [&](int64_t t) { check_time(in, t); };
  auto count = [&](uint64_t n) { check_count(in, n); };
  const size_t strings = h.strings.size(), modules = h.modules.size(), infos = h.op_infos.size();
  auto str = [&](uint32_t id) {
    if (id >= strings) in.bad(fmt::format("string {} of {}", id, strings));
  };
  auto module = [&](uint32_t id) {
    if (id >= modules) in.bad(fmt::format("module {} of {}", id, modules));
  };
  for (const PartialModule& m : h.modules) str(m.name);
  for (const PartialOpInfo& i : h.op_infos) {
    str(i.opcode);
    str(i.op_name);
    str(i.source);
    str(i.category);
  }
  for (const PartialDevice& d : h.devices) {
    for (const PartialOpGroup& g : d.op_groups) {
      module(g.module);
      for (uint32_t s : {g.hlo_op, g.kernel, g.display, g.opcode, g.op_name, g.source, g.category})
        str(s);
      if (g.duration.count == 0) in.bad("an empty op group");
    }
    for (const PartialExecution& e : d.executions) {
      module(e.module);
      if ((parts & kPartExecutionOps) && uint64_t{e.first_op} + e.ops > d.execution_ops.size())
        in.bad("an execution's ops run past the table");
      if (e.end_ps < e.start_ps) in.bad("an execution ends before it starts");
    }
    for (const PartialExecutionOp& o : d.execution_ops) {
      str(o.name);
      if (o.info >= infos) in.bad(fmt::format("op info {} of {}", o.info, infos));
    }
    for (const PartialCollectiveOp& op : d.collective_ops) {
      module(op.module);
      str(op.name);
      str(op.opcode);
      str(op.shapes);
    }
    for (const PartialCollectiveExecution& e : d.collective_executions)
      if (e.op >= d.collective_ops.size()) in.bad("a collective execution of an unknown op");
    const PartialFlame& fl = d.flame;
    for (int64_t v : {fl.busy_ps, fl.span_ps, fl.idle_during_modules_ps, fl.idle_between_modules_ps,
                      fl.set_apart_ps})
      time(v);
    count(fl.events);
    for (uint32_t m : fl.modules_used) module(m);
    for (const auto& frames : fl.by)
      for (const PartialFlameFrame& fr : frames) {
        str(fr.name);
        module(fr.module);
        if (fr.self_ps < 0 || fr.self_ps > kTotal) in.bad("a flame stack's weight is out of range");
      }
  }
  for (const PartialKernelDevice& d : h.kernels.devices)
    for (const PartialKernel& k : d.kernels) {
      str(k.name);
      str(k.display);
      count(k.count);
      if (k.count == 0) in.bad("a kernel without launches");
      for (int64_t v : {k.min_ps, k.max_ps}) time(v);
      if (k.total_ps < 0 || k.total_ps > kTotal) in.bad("a kernel's total is out of range");
      for (const PartialKernelConfig& c : k.configs) {
        str(c.details);
        count(c.count);
        if (c.total_ps < 0 || c.total_ps > kTotal)
          in.bad("a kernel configuration's total is out of range");
      }
      for (const PartialKernelOp& op : k.ops) {
        module(op.module);
        str(op.hlo_op);
        str(op.op_name);
        count(op.first);
        if (op.total_ps < 0 || op.total_ps > kTotal) in.bad("a kernel op's total is out of range");
      }
    }
  for (const PartialStep& s : h.steps.steps) str(s.name);
  for (const PartialStepWindow& w : h.steps.windows)
    if (w.step >= h.steps.steps.size()) in.bad("a step window of an unknown step");
}

}  // namespace

void validate(const Decoder& in, const HostPartial& h, uint32_t parts) {
  check_ranges(in, h);
  check_tables(in, h, parts);
}

}  // namespace jaxprof::partial_io
