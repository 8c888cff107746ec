// A device's record (partial.proto Device) and the records inside it: op groups with their
// moments, the timeline, executions and their ops, collective ops and their executions. Each
// writer is followed by its reader; the device's flame is in partial_flame_io.cc.
#include <string>

#include "jaxprof/formats/partial/partial_io.h"
#include "jaxprof/model/time_range.h"

namespace jaxprof::partial_io {

namespace {

// Moments ---------------------------------------------------------------------------------------

Writer write_moments(const DurationMoments& m) {
  Writer w;
  w.varint(1, m.count);
  w.int64(2, m.sum);
  w.varint(3, static_cast<uint64_t>(m.sum_sq));
  w.varint(4, static_cast<uint64_t>(m.sum_sq >> 64));
  w.sint64(5, m.min);
  w.sint64(6, m.max);
  return w;
}

DurationMoments read_moments(const Decoder& in, std::string_view msg) {
  DurationMoments m;
  uint64_t lo = 0, hi = 0;
  in.each(msg, [&](const wire::Field& f) {
    switch (f.number) {
      case 1:
        m.count = f.value;
        break;
      case 2:
        m.sum = f.as_int64();
        break;
      case 3:
        lo = f.value;
        break;
      case 4:
        hi = f.value;
        break;
      case 5:
        m.min = wire::unzigzag(f.value);
        break;
      case 6:
        m.max = wire::unzigzag(f.value);
        break;
    }
  });
  m.sum_sq = (static_cast<unsigned __int128>(hi) << 64) | lo;
  return m;
}

// OpGroup ---------------------------------------------------------------------------------------

Writer write_op_group(const PartialOpGroup& g) {
  Writer x;
  x.varint(1, g.module);
  x.varint(2, g.hlo_op);
  x.varint(3, g.kernel);
  x.varint(4, g.display);
  x.message(5, write_moments(g.duration));
  x.int64(6, g.self_ps);
  x.varint(7, g.first);
  x.varint(8, g.opcode);
  x.varint(9, g.op_name);
  x.varint(10, g.source);
  if (g.category != 0) x.varint(11, g.category);
  return x;
}

void read_op_group(const Decoder& in, std::string_view msg, PartialOpGroup& g) {
  in.each(msg, [&](const wire::Field& x) {
    switch (x.number) {
      case 1:
        g.module = static_cast<uint32_t>(x.value);
        break;
      case 2:
        g.hlo_op = static_cast<uint32_t>(x.value);
        break;
      case 3:
        g.kernel = static_cast<uint32_t>(x.value);
        break;
      case 4:
        g.display = static_cast<uint32_t>(x.value);
        break;
      case 5:
        g.duration = read_moments(in, x.bytes);
        break;
      case 6:
        g.self_ps = x.as_int64();
        break;
      case 7:
        g.first = x.value;
        break;
      case 8:
        g.opcode = static_cast<uint32_t>(x.value);
        break;
      case 9:
        g.op_name = static_cast<uint32_t>(x.value);
        break;
      case 10:
        g.source = static_cast<uint32_t>(x.value);
        break;
      case 11:
        g.category = static_cast<uint32_t>(x.value);
        break;
    }
  });
}

// Timeline: its times from kTimelineTimes (partial_io.h) ----------------------------------------

Writer write_timeline(const DeviceTimeline& t) {
  Writer w;
  w.varint(1, t.events);
  w.varint(2, t.executions);
  for (uint32_t i = 0; i < std::size(kTimelineTimes); ++i) w.int64(3 + i, t.*kTimelineTimes[i]);
  if (t.set_apart_ps != 0) w.int64(13, t.set_apart_ps);
  return w;
}

DeviceTimeline read_timeline(const Decoder& in, std::string_view msg) {
  DeviceTimeline t;
  in.each(msg, [&](const wire::Field& f) {
    if (f.number == 1)
      t.events = f.value;
    else if (f.number == 2)
      t.executions = f.value;
    else if (f.number >= 3 && f.number < 3 + std::size(kTimelineTimes))
      t.*kTimelineTimes[f.number - 3] = f.as_int64();
    else if (f.number == 13)
      t.set_apart_ps = f.as_int64();
  });
  return t;
}

// Execution -------------------------------------------------------------------------------------

Writer write_execution(const PartialExecution& e) {
  Writer x;
  x.varint(1, e.module);
  if (e.run_id) x.int64(2, *e.run_id);
  x.sint64(3, e.start_ps);
  x.sint64(4, e.end_ps);
  x.boolean(5, e.warmup);
  x.varint(6, e.events);
  x.varint(7, e.first_op);
  x.varint(8, e.ops);
  if (e.role != ExecutionRole::kSteady) x.varint(9, static_cast<uint64_t>(e.role));
  return x;
}

void read_execution(const Decoder& in, std::string_view msg, PartialExecution& e) {
  in.each(msg, [&](const wire::Field& x) {
    switch (x.number) {
      case 1:
        e.module = static_cast<uint32_t>(x.value);
        break;
      case 2:
        e.run_id = x.as_int64();
        break;
      case 3:
        e.start_ps = wire::unzigzag(x.value);
        break;
      case 4:
        e.end_ps = wire::unzigzag(x.value);
        break;
      case 5:
        e.warmup = x.value != 0;
        break;
      case 6:
        e.events = x.value;
        break;
      case 7:
        e.first_op = static_cast<uint32_t>(x.value);
        break;
      case 8:
        e.ops = static_cast<uint32_t>(x.value);
        break;
      case 9:
        if (x.value > static_cast<uint64_t>(ExecutionRole::kAutotuning))
          in.bad("unknown execution role");
        e.role = static_cast<ExecutionRole>(x.value);
        break;
    }
  });
}

// ExecutionOps: packed columns ------------------------------------------------------------------

Writer write_execution_ops(const std::vector<PartialExecutionOp>& o) {
  Writer x;
  x.packed(1, o.size(), [&](size_t i) { return o[i].name; });
  x.packed(2, o.size(), [&](size_t i) { return o[i].total_ps; });
  x.packed(3, o.size(), [&](size_t i) { return o[i].events; });
  x.packed(4, o.size(), [&](size_t i) { return o[i].info; });
  return x;
}

// Adds the message's ops to `ops`.
void read_execution_ops(const Decoder& in, std::string_view msg,
                        std::vector<PartialExecutionOp>& ops) {
  std::vector<uint32_t> names, events, infos;
  std::vector<int64_t> totals;
  in.each(msg, [&](const wire::Field& x) {
    if (x.type != wire::WireType::kLen) in.bad("execution ops are not packed");
    if (x.number == 1) names = in.packed<uint32_t>(x);
    if (x.number == 2) totals = in.packed<int64_t>(x);
    if (x.number == 3) events = in.packed<uint32_t>(x);
    if (x.number == 4) infos = in.packed<uint32_t>(x);
  });
  if (totals.size() != names.size() || events.size() != names.size() ||
      infos.size() != names.size())
    in.bad("execution op columns differ in length");
  for (size_t i = 0; i < names.size(); ++i)
    ops.push_back({names[i], totals[i], events[i], infos[i]});
}

// CollectiveOp ----------------------------------------------------------------------------------

Writer write_collective_op(const PartialCollectiveOp& op) {
  Writer x;
  x.varint(1, op.module);
  x.varint(2, op.name);
  x.varint(3, op.opcode);
  x.boolean(4, op.async);
  x.varint(5, op.message_bytes);
  x.varint(6, op.shapes);
  x.int64(7, op.group_size);
  x.varint(8, op.groups);
  x.sint64(9, op.device_group);
  return x;
}

void read_collective_op(const Decoder& in, std::string_view msg, PartialCollectiveOp& op) {
  in.each(msg, [&](const wire::Field& x) {
    switch (x.number) {
      case 1:
        op.module = static_cast<uint32_t>(x.value);
        break;
      case 2:
        op.name = static_cast<uint32_t>(x.value);
        break;
      case 3:
        op.opcode = static_cast<uint32_t>(x.value);
        break;
      case 4:
        op.async = x.value != 0;
        break;
      case 5:
        op.message_bytes = x.value;
        break;
      case 6:
        op.shapes = static_cast<uint32_t>(x.value);
        break;
      case 7:
        op.group_size = x.as_int64();
        break;
      case 8:
        op.groups = static_cast<uint32_t>(x.value);
        break;
      case 9:
        op.device_group = wire::unzigzag(x.value);
        break;
    }
  });
}

// CollectiveExecution ---------------------------------------------------------------------------

Writer write_collective_execution(const PartialCollectiveExecution& e) {
  Writer x;
  x.varint(1, e.op);
  x.sint64(2, e.begin_ps);
  x.sint64(3, e.end_ps);
  x.int64(4, e.exposed_ps);
  if (e.run_id) x.int64(5, *e.run_id);
  x.int64(6, e.duration_ps);
  return x;
}

void read_collective_execution(const Decoder& in, std::string_view msg,
                               PartialCollectiveExecution& e) {
  bool duration = false;
  in.each(msg, [&](const wire::Field& x) {
    switch (x.number) {
      case 1:
        e.op = static_cast<uint32_t>(x.value);
        break;
      case 2:
        e.begin_ps = wire::unzigzag(x.value);
        break;
      case 3:
        e.end_ps = wire::unzigzag(x.value);
        break;
      case 4:
        e.exposed_ps = x.as_int64();
        break;
      case 5:
        e.run_id = x.as_int64();
        break;
      case 6:
        e.duration_ps = x.as_int64();
        duration = true;
        break;
    }
  });
  // Written without the field: the span, unless the times are too far apart to be one
  // (validate then bounds every time).
  if (!duration && !checked_sub(e.end_ps, e.begin_ps, e.duration_ps))
    in.bad("a collective execution's times are out of range");
}

}  // namespace

// Device ----------------------------------------------------------------------------------------

Writer write_device(const PartialDevice& d) {
  Writer w;
  w.bytes(1, d.name);
  w.varint(2, d.plane);
  w.varint(3, d.op_events);
  w.varint(4, d.op_selected);
  w.int64(5, d.op_busy_ps);
  w.int64(6, d.op_span_ps);
  for (const PartialOpGroup& g : d.op_groups) w.message(7, write_op_group(g));
  w.message(8, write_timeline(d.timeline));
  w.varint(9, static_cast<uint64_t>(d.execution_source));
  for (const PartialExecution& e : d.executions) w.message(10, write_execution(e));
  if (!d.execution_ops.empty()) w.message(11, write_execution_ops(d.execution_ops));
  for (const PartialCollectiveOp& op : d.collective_ops) w.message(12, write_collective_op(op));
  for (const PartialCollectiveExecution& e : d.collective_executions)
    w.message(13, write_collective_execution(e));
  w.varint(14, d.op_device_clock_events);
  if (d.op_set_apart != 0) w.varint(15, d.op_set_apart);
  if (d.flame.present || !d.flame.modules_used.empty()) w.message(16, write_flame(d.flame));
  return w;
}

namespace {

// The part a device's list field belongs to; 0 for its scalars (always read).
uint32_t part_of_device_field(uint32_t field) {
  switch (field) {
    case 7:
      return kPartOps;
    case 8:
      return kPartTimeline;
    case 10:
      return kPartExecutions;
    case 11:
      return kPartExecutionOps;
    case 12:
    case 13:
      return kPartCollectives;
    case 16:
      return kPartFlame;
    default:
      return 0;
  }
}

}  // namespace

PartialDevice read_device(const Decoder& in, std::string_view msg, uint32_t parts) {
  PartialDevice d;
  in.each(msg, [&](const wire::Field& f) {
    if (const uint32_t part = part_of_device_field(f.number); part && !(parts & part)) return;
    switch (f.number) {
      case 1:
        d.name = std::string(f.bytes);
        break;
      case 2:
        d.plane = static_cast<uint32_t>(f.value);
        break;
      case 3:
        d.op_events = f.value;
        break;
      case 4:
        d.op_selected = f.value;
        break;
      case 5:
        d.op_busy_ps = f.as_int64();
        break;
      case 6:
        d.op_span_ps = f.as_int64();
        break;
      case 14:
        d.op_device_clock_events = f.value;
        break;
      case 7:
        read_op_group(in, f.bytes, d.op_groups.emplace_back());
        break;
      case 8:
        d.timeline = read_timeline(in, f.bytes);
        break;
      case 9:
        if (f.value > static_cast<uint64_t>(ExecutionSource::kHostThread))
          in.bad("unknown execution source");
        d.execution_source = static_cast<ExecutionSource>(f.value);
        break;
      case 10:
        read_execution(in, f.bytes, d.executions.emplace_back());
        break;
      case 11:
        read_execution_ops(in, f.bytes, d.execution_ops);
        break;
      case 12:
        read_collective_op(in, f.bytes, d.collective_ops.emplace_back());
        break;
      case 13:
        read_collective_execution(in, f.bytes, d.collective_executions.emplace_back());
        break;
      case 15:
        d.op_set_apart = f.value;
        break;
      case 16:
        d.flame = read_flame(in, f.bytes);
        break;
    }
  });
  // Growth by doubling leaves up to half of each vector unused; a set of a thousand hosts keeps
  // every device decoded (1,000 CPU hosts of 8 devices: 87 MB of device vectors before this).
  d.op_groups.shrink_to_fit();
  d.executions.shrink_to_fit();
  d.execution_ops.shrink_to_fit();
  d.collective_ops.shrink_to_fit();
  d.collective_executions.shrink_to_fit();
  return d;
}

}  // namespace jaxprof::partial_io
