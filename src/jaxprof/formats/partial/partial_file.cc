#include "jaxprof/formats/partial/partial_file.h"

#include <fmt/format.h>
#include <zlib.h>

#include <cstdio>
#include <functional>
#include <limits>
#include <memory>

#include "jaxprof/model/flame_frame_kind.h"
#include "jaxprof/common/error.h"
#include "jaxprof/io/buffer.h"
#include "jaxprof/model/time_range.h"
#include "jaxprof/wire/reader.h"
#include "jaxprof/wire/writer.h"

namespace jaxprof {

namespace {

using wire::Writer;

// Field numbers: partial.proto.
void put_program(Writer& w, uint32_t field, ProgramId id) {
  if (id != kNoProgram) w.varint(field, id);
}

Writer moments(const DurationMoments& m) {
  Writer w;
  w.varint(1, m.count);
  w.int64(2, m.sum);
  w.varint(3, static_cast<uint64_t>(m.sum_sq));
  w.varint(4, static_cast<uint64_t>(m.sum_sq >> 64));
  w.sint64(5, m.min);
  w.sint64(6, m.max);
  return w;
}

Writer timeline(const DeviceTimeline& t) {
  Writer w;
  w.varint(1, t.events);
  w.varint(2, t.executions);
  const int64_t values[] = {t.span_ps,
                            t.busy_ps,
                            t.compute_ps,
                            t.comm_ps,
                            t.comm_exposed_ps,
                            t.memcpy_ps,
                            t.memcpy_exposed_ps,
                            t.idle_ps,
                            t.idle_in_modules_ps,
                            t.idle_between_modules_ps};
  for (uint32_t i = 0; i < std::size(values); ++i) w.int64(3 + i, values[i]);
  if (t.set_apart_ps != 0) w.int64(13, t.set_apart_ps);
  return w;
}

Writer set_apart(const SetApartWork& s) {
  Writer w;
  w.varint(1, s.executions);
  w.varint(2, s.op_events);
  w.int64(3, s.execution_ps);
  for (const std::string& m : s.modules) w.bytes(4, m);
  return w;
}

Writer steady(const PartialSteady& s) {
  Writer w;
  w.boolean(1, s.options.include_autotuning);
  w.boolean(2, s.options.include_warmup);
  w.message(3, set_apart(s.autotuning));
  w.message(4, set_apart(s.warmup));
  w.int64(5, s.all_execution_ps);
  w.varint(6, s.devices_without_steady_state);
  return w;
}

Writer flame_stacks(const std::vector<PartialFlameFrame>& f) {
  Writer w;
  w.packed(1, f.size(), [&](size_t i) { return f[i].parent; });
  w.packed(2, f.size(), [&](size_t i) { return f[i].name; });
  w.packed(3, f.size(), [&](size_t i) { return f[i].module; });
  w.packed(4, f.size(), [&](size_t i) { return f[i].kind; });
  w.packed(5, f.size(), [&](size_t i) { return f[i].self_ps; });
  return w;
}

Writer flame(const PartialFlame& f) {
  Writer w;
  w.varint(1, f.events);
  w.int64(2, f.busy_ps);
  w.int64(3, f.span_ps);
  w.boolean(4, f.has_modules);
  w.int64(5, f.idle_during_modules_ps);
  w.int64(6, f.idle_between_modules_ps);
  w.int64(7, f.set_apart_ps);
  w.packed(8, f.modules_used.size(), [&](size_t i) { return f.modules_used[i]; });
  for (uint32_t by = 0; by < 3; ++by)
    if (f.bys & (1u << by)) w.message(9 + by, flame_stacks(f.by[by]));
  w.boolean(12, f.present);
  return w;
}

Writer device(const PartialDevice& d) {
  Writer w;
  w.bytes(1, d.name);
  w.varint(2, d.plane);
  w.varint(3, d.op_events);
  w.varint(4, d.op_selected);
  w.int64(5, d.op_busy_ps);
  w.int64(6, d.op_span_ps);
  for (const PartialOpGroup& g : d.op_groups) {
    Writer x;
    x.varint(1, g.module);
    x.varint(2, g.hlo_op);
    x.varint(3, g.kernel);
    x.varint(4, g.display);
    x.message(5, moments(g.duration));
    x.int64(6, g.self_ps);
    x.varint(7, g.first);
    x.varint(8, g.opcode);
    x.varint(9, g.op_name);
    x.varint(10, g.source);
    if (g.category != 0) x.varint(11, g.category);
    w.message(7, x);
  }
  w.message(8, timeline(d.timeline));
  w.varint(9, static_cast<uint64_t>(d.execution_source));
  for (const PartialExecution& e : d.executions) {
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
    w.message(10, x);
  }
  if (!d.execution_ops.empty()) {
    const auto& o = d.execution_ops;
    Writer x;
    x.packed(1, o.size(), [&](size_t i) { return o[i].name; });
    x.packed(2, o.size(), [&](size_t i) { return o[i].total_ps; });
    x.packed(3, o.size(), [&](size_t i) { return o[i].events; });
    x.packed(4, o.size(), [&](size_t i) { return o[i].info; });
    w.message(11, x);
  }
  for (const PartialCollectiveOp& op : d.collective_ops) {
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
    w.message(12, x);
  }
  for (const PartialCollectiveExecution& e : d.collective_executions) {
    Writer x;
    x.varint(1, e.op);
    x.sint64(2, e.begin_ps);
    x.sint64(3, e.end_ps);
    x.int64(4, e.exposed_ps);
    if (e.run_id) x.int64(5, *e.run_id);
    x.int64(6, e.duration_ps);
    w.message(13, x);
  }
  w.varint(14, d.op_device_clock_events);
  if (d.op_set_apart != 0) w.varint(15, d.op_set_apart);
  if (d.flame.present || !d.flame.modules_used.empty()) w.message(16, flame(d.flame));
  return w;
}

Writer compile(const PartialCompile& c) {
  Writer w;
  w.boolean(1, c.totals_only);
  for (const CompileRecord& r : c.records) {
    Writer x;
    x.bytes(1, r.host);
    x.bytes(2, r.thread);
    x.bytes(3, r.module);
    x.bytes(4, r.function);
    put_program(x, 5, r.program_id);
    x.sint64(6, r.start_ps);
    x.int64(7, r.wall_ps);
    x.varint(8, r.events);
    x.varint(9, r.worker_threads);
    x.int64(10, r.worker_busy_ps);
    for (const CompilePhaseTime& ph : r.phases) {
      Writer y;
      y.varint(1, static_cast<uint64_t>(ph.phase));
      y.int64(2, ph.wall_ps);
      y.int64(3, ph.thread_ps);
      x.message(11, y);
    }
    for (const CompileStepTime& st : r.steps) {
      Writer y;
      y.bytes(1, st.name);
      y.varint(2, static_cast<uint64_t>(st.phase));
      y.varint(3, st.count);
      y.int64(4, st.wall_ps);
      y.int64(5, st.thread_ps);
      x.message(12, y);
    }
    w.message(2, x);
  }
  w.boolean(3, c.saw_stage);
  w.varint(4, c.unattributed);
  return w;
}

Writer kernels(const PartialKernels& k) {
  Writer w;
  w.boolean(1, k.gpu_events);
  w.boolean(2, k.host_cpu);
  for (const std::string& d : k.other_devices) w.bytes(3, d);
  for (const PartialKernelDevice& d : k.devices) {
    Writer x;
    x.bytes(1, d.name);
    for (const PartialKernel& kn : d.kernels) {
      Writer y;
      y.varint(1, kn.name);
      y.varint(2, kn.display);
      y.varint(3, kn.count);
      y.int64(4, kn.total_ps);
      y.sint64(5, kn.min_ps);
      y.sint64(6, kn.max_ps);
      for (const PartialKernelConfig& c : kn.configs) {
        Writer z;
        z.varint(1, c.details);
        z.varint(2, c.count);
        z.int64(3, c.total_ps);
        y.message(7, z);
      }
      for (const PartialKernelOp& op : kn.ops) {
        Writer z;
        z.varint(1, op.module);
        z.varint(2, op.hlo_op);
        z.int64(3, op.total_ps);
        z.varint(4, op.first);
        z.varint(5, op.op_name);
        y.message(8, z);
      }
      x.message(2, y);
    }
    w.message(4, x);
  }
  return w;
}

Writer host(const HostPartial& h) {
  Writer w;
  w.varint(1, h.parts);
  w.bytes(2, h.host);
  w.bytes(3, h.path);
  w.int64(4, h.base_ns);
  w.varint(5, h.file_bytes);
  w.boolean(6, h.cpu_backend);
  for (const std::string& s : h.strings.all()) w.bytes(7, s);
  for (const PartialModule& m : h.modules) {
    Writer x;
    x.varint(1, m.name);
    put_program(x, 2, m.program_id);
    w.message(8, x);
  }
  for (const PartialOpInfo& i : h.op_infos) {
    Writer x;
    x.varint(1, i.opcode);
    x.varint(2, i.op_name);
    x.varint(3, i.source);
    x.varint(4, i.category);
    w.message(9, x);
  }
  for (const PartialDevice& d : h.devices) w.message(10, device(d));
  {
    Writer x;
    x.varint(1, static_cast<uint64_t>(h.steps.source));
    for (const PartialStep& s : h.steps.steps) {
      Writer y;
      y.sint64(1, s.number);
      y.varint(2, s.name);
      y.sint64(3, s.start_ps);
      y.sint64(4, s.end_ps);
      y.varint(5, s.windows);
      y.int64(6, s.longest_window_ps);
      if (s.compiling) y.boolean(7, true);
      x.message(2, y);
    }
    for (const PartialStepWindow& win : h.steps.windows) {
      Writer y;
      y.sint64(1, win.plane);
      y.sint64(2, win.start_ps);
      y.sint64(3, win.end_ps);
      y.varint(4, win.step);
      x.message(3, y);
    }
    w.message(11, x);
  }
  w.message(12, compile(h.compile));
  for (const std::string& s : h.warnings) w.bytes(13, s);
  if (h.parts & kPartKernels) w.message(14, kernels(h.kernels));
  if (h.steady.known) w.message(15, steady(h.steady));
  {
    Writer x;
    for (const std::string& c : h.captured_on) x.bytes(1, c);
    x.boolean(2, h.gpu);
    x.boolean(3, h.tpu);
    w.message(16, x);
  }
  return w;
}

// Reading: every message is a loop over its fields; unknown fields are skipped, so that a newer
// writer's additions do not stop an older reader of the same version.
class FileReader {
 public:
  FileReader(std::string_view bytes, const std::string& path)
      : origin_(reinterpret_cast<const uint8_t*>(bytes.data())), path_(path) {}

  [[noreturn]] void bad(const std::string& what) const {
    throw InputError(path_, "corrupt partial file: " + what);
  }

  template <typename F>
  void each(std::string_view msg, F&& f) const {
    wire::Reader r(msg, origin_);
    wire::Field fl;
    while (r.next(fl)) f(fl);
  }
  template <typename T>
  std::vector<T> packed(const wire::Field& f) const {
    std::vector<T> out;
    const uint8_t* p = reinterpret_cast<const uint8_t*>(f.bytes.data());
    const uint8_t* end = p + f.bytes.size();
    while (p < end) out.push_back(static_cast<T>(wire::read_varint(p, end, origin_)));
    return out;
  }

  DurationMoments moments(std::string_view msg) const {
    DurationMoments m;
    uint64_t lo = 0, hi = 0;
    each(msg, [&](const wire::Field& f) {
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

  DeviceTimeline timeline(std::string_view msg) const {
    DeviceTimeline t;
    int64_t* values[] = {&t.span_ps,
                         &t.busy_ps,
                         &t.compute_ps,
                         &t.comm_ps,
                         &t.comm_exposed_ps,
                         &t.memcpy_ps,
                         &t.memcpy_exposed_ps,
                         &t.idle_ps,
                         &t.idle_in_modules_ps,
                         &t.idle_between_modules_ps};
    each(msg, [&](const wire::Field& f) {
      if (f.number == 1)
        t.events = f.value;
      else if (f.number == 2)
        t.executions = f.value;
      else if (f.number >= 3 && f.number < 3 + std::size(values))
        *values[f.number - 3] = f.as_int64();
      else if (f.number == 13)
        t.set_apart_ps = f.as_int64();
    });
    return t;
  }

  SetApartWork set_apart(std::string_view msg) const {
    SetApartWork s;
    each(msg, [&](const wire::Field& f) {
      if (f.number == 1) s.executions = f.value;
      if (f.number == 2) s.op_events = f.value;
      if (f.number == 3) s.execution_ps = f.as_int64();
      if (f.number == 4) s.modules.emplace_back(f.bytes);
    });
    return s;
  }

  PartialSteady steady(std::string_view msg) const {
    PartialSteady s;
    s.known = true;
    each(msg, [&](const wire::Field& f) {
      switch (f.number) {
        case 1:
          s.options.include_autotuning = f.value != 0;
          break;
        case 2:
          s.options.include_warmup = f.value != 0;
          break;
        case 3:
          s.autotuning = set_apart(f.bytes);
          break;
        case 4:
          s.warmup = set_apart(f.bytes);
          break;
        case 5:
          s.all_execution_ps = f.as_int64();
          break;
        case 6:
          s.devices_without_steady_state = f.value;
          break;
      }
    });
    return s;
  }

  PartialDevice device(std::string_view msg) const {
    PartialDevice d;
    each(msg, [&](const wire::Field& f) {
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
        case 7: {
          PartialOpGroup& g = d.op_groups.emplace_back();
          each(f.bytes, [&](const wire::Field& x) {
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
                g.duration = moments(x.bytes);
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
          break;
        }
        case 8:
          d.timeline = timeline(f.bytes);
          break;
        case 9:
          if (f.value > static_cast<uint64_t>(ExecutionSource::kConsecutive))
            bad("unknown execution source");
          d.execution_source = static_cast<ExecutionSource>(f.value);
          break;
        case 10: {
          PartialExecution& e = d.executions.emplace_back();
          each(f.bytes, [&](const wire::Field& x) {
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
                  bad("unknown execution role");
                e.role = static_cast<ExecutionRole>(x.value);
                break;
            }
          });
          break;
        }
        case 11: {
          std::vector<uint32_t> names, events, infos;
          std::vector<int64_t> totals;
          each(f.bytes, [&](const wire::Field& x) {
            if (x.type != wire::WireType::kLen) bad("execution ops are not packed");
            if (x.number == 1) names = packed<uint32_t>(x);
            if (x.number == 2) totals = packed<int64_t>(x);
            if (x.number == 3) events = packed<uint32_t>(x);
            if (x.number == 4) infos = packed<uint32_t>(x);
          });
          if (totals.size() != names.size() || events.size() != names.size() ||
              infos.size() != names.size())
            bad("execution op columns differ in length");
          for (size_t i = 0; i < names.size(); ++i)
            d.execution_ops.push_back({names[i], totals[i], events[i], infos[i]});
          break;
        }
        case 12: {
          PartialCollectiveOp& op = d.collective_ops.emplace_back();
          each(f.bytes, [&](const wire::Field& x) {
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
          break;
        }
        case 13: {
          PartialCollectiveExecution& e = d.collective_executions.emplace_back();
          bool duration = false;
          each(f.bytes, [&](const wire::Field& x) {
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
            bad("a collective execution's times are out of range");
          break;
        }
        case 15:
          d.op_set_apart = f.value;
          break;
        case 16:
          d.flame = flame(f.bytes);
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

  std::vector<PartialFlameFrame> flame_stacks(std::string_view msg) const {
    std::vector<uint32_t> parents, names, modules, kinds;
    std::vector<int64_t> selfs;
    each(msg, [&](const wire::Field& x) {
      if (x.type != wire::WireType::kLen) bad("flame stacks are not packed");
      if (x.number == 1) parents = packed<uint32_t>(x);
      if (x.number == 2) names = packed<uint32_t>(x);
      if (x.number == 3) modules = packed<uint32_t>(x);
      if (x.number == 4) kinds = packed<uint32_t>(x);
      if (x.number == 5) selfs = packed<int64_t>(x);
    });
    const size_t n = parents.size();
    if (names.size() != n || modules.size() != n || kinds.size() != n || selfs.size() != n)
      bad("flame stack columns differ in length");
    std::vector<PartialFlameFrame> out(n);
    for (size_t i = 0; i < n; ++i) {
      if (parents[i] > i) bad("a flame frame before its parent");
      if (kinds[i] < static_cast<uint32_t>(FrameKind::kSource) ||
          kinds[i] > static_cast<uint32_t>(FrameKind::kOp))
        bad("a flame frame of an unknown kind");
      out[i] = {parents[i], names[i], modules[i], static_cast<uint8_t>(kinds[i]), selfs[i]};
    }
    return out;
  }

  PartialFlame flame(std::string_view msg) const {
    PartialFlame f;
    each(msg, [&](const wire::Field& x) {
      switch (x.number) {
        case 1:
          f.events = x.value;
          break;
        case 2:
          f.busy_ps = x.as_int64();
          break;
        case 3:
          f.span_ps = x.as_int64();
          break;
        case 4:
          f.has_modules = x.value != 0;
          break;
        case 5:
          f.idle_during_modules_ps = x.as_int64();
          break;
        case 6:
          f.idle_between_modules_ps = x.as_int64();
          break;
        case 7:
          f.set_apart_ps = x.as_int64();
          break;
        case 8:
          if (x.type != wire::WireType::kLen) bad("flame modules are not packed");
          f.modules_used = packed<uint32_t>(x);
          break;
        case 9:
        case 10:
        case 11:
          f.by[x.number - 9] = flame_stacks(x.bytes);
          f.bys |= static_cast<uint8_t>(1u << (x.number - 9));
          break;
        case 12:
          f.present = x.value != 0;
          break;
      }
    });
    return f;
  }

  PartialCompile compile(std::string_view msg) const {
    PartialCompile c;
    each(msg, [&](const wire::Field& f) {
      if (f.number == 1) c.totals_only = f.value != 0;
      if (f.number == 3) c.saw_stage = f.value != 0;
      if (f.number == 4) c.unattributed = f.value;
      if (f.number != 2) return;
      CompileRecord& r = c.records.emplace_back();
      each(f.bytes, [&](const wire::Field& x) {
        switch (x.number) {
          case 1:
            r.host = std::string(x.bytes);
            break;
          case 2:
            r.thread = std::string(x.bytes);
            break;
          case 3:
            r.module = std::string(x.bytes);
            break;
          case 4:
            r.function = std::string(x.bytes);
            break;
          case 5:
            r.program_id = x.value;
            break;
          case 6:
            r.start_ps = wire::unzigzag(x.value);
            break;
          case 7:
            r.wall_ps = x.as_int64();
            break;
          case 8:
            r.events = x.value;
            break;
          case 9:
            r.worker_threads = static_cast<uint32_t>(x.value);
            break;
          case 10:
            r.worker_busy_ps = x.as_int64();
            break;
          case 11: {
            CompilePhaseTime& ph = r.phases.emplace_back();
            each(x.bytes, [&](const wire::Field& y) {
              if (y.number == 1) ph.phase = phase(y.value);
              if (y.number == 2) ph.wall_ps = y.as_int64();
              if (y.number == 3) ph.thread_ps = y.as_int64();
            });
            break;
          }
          case 12: {
            CompileStepTime& st = r.steps.emplace_back();
            each(x.bytes, [&](const wire::Field& y) {
              if (y.number == 1) st.name = std::string(y.bytes);
              if (y.number == 2) st.phase = phase(y.value);
              if (y.number == 3) st.count = y.value;
              if (y.number == 4) st.wall_ps = y.as_int64();
              if (y.number == 5) st.thread_ps = y.as_int64();
            });
            break;
          }
        }
      });
      if (r.phases.size() != static_cast<size_t>(kCompilePhaseCount))
        bad("a compile without its phases");
    });
    return c;
  }

  PartialKernels kernels(std::string_view msg) const {
    PartialKernels k;
    each(msg, [&](const wire::Field& f) {
      if (f.number == 1) k.gpu_events = f.value != 0;
      if (f.number == 2) k.host_cpu = f.value != 0;
      if (f.number == 3) k.other_devices.emplace_back(f.bytes);
      if (f.number != 4) return;
      PartialKernelDevice& d = k.devices.emplace_back();
      each(f.bytes, [&](const wire::Field& x) {
        if (x.number == 1) d.name = std::string(x.bytes);
        if (x.number != 2) return;
        PartialKernel& kn = d.kernels.emplace_back();
        each(x.bytes, [&](const wire::Field& y) {
          switch (y.number) {
            case 1:
              kn.name = static_cast<uint32_t>(y.value);
              break;
            case 2:
              kn.display = static_cast<uint32_t>(y.value);
              break;
            case 3:
              kn.count = y.value;
              break;
            case 4:
              kn.total_ps = y.as_int64();
              break;
            case 5:
              kn.min_ps = wire::unzigzag(y.value);
              break;
            case 6:
              kn.max_ps = wire::unzigzag(y.value);
              break;
            case 7: {
              PartialKernelConfig& c = kn.configs.emplace_back();
              each(y.bytes, [&](const wire::Field& z) {
                if (z.number == 1) c.details = static_cast<uint32_t>(z.value);
                if (z.number == 2) c.count = z.value;
                if (z.number == 3) c.total_ps = z.as_int64();
              });
              break;
            }
            case 8: {
              PartialKernelOp& op = kn.ops.emplace_back();
              each(y.bytes, [&](const wire::Field& z) {
                if (z.number == 1) op.module = static_cast<uint32_t>(z.value);
                if (z.number == 2) op.hlo_op = static_cast<uint32_t>(z.value);
                if (z.number == 3) op.total_ps = z.as_int64();
                if (z.number == 4) op.first = z.value;
                if (z.number == 5) op.op_name = static_cast<uint32_t>(z.value);
              });
              break;
            }
          }
        });
      });
    });
    return k;
  }

  CompilePhase phase(uint64_t v) const {
    if (v >= static_cast<uint64_t>(kCompilePhaseCount)) bad("unknown compile phase");
    return static_cast<CompilePhase>(v);
  }

  HostPartial host(std::string_view msg) const {
    HostPartial h;
    std::vector<std::string> strings;
    each(msg, [&](const wire::Field& f) {
      switch (f.number) {
        case 1:
          h.parts = static_cast<uint32_t>(f.value);
          break;
        case 2:
          h.host = std::string(f.bytes);
          break;
        case 3:
          h.path = std::string(f.bytes);
          break;
        case 4:
          h.base_ns = f.as_int64();
          break;
        case 5:
          h.file_bytes = f.value;
          break;
        case 6:
          h.cpu_backend = f.value != 0;
          break;
        case 7:
          strings.emplace_back(f.bytes);
          break;
        case 8: {
          PartialModule& m = h.modules.emplace_back();
          each(f.bytes, [&](const wire::Field& x) {
            if (x.number == 1) m.name = static_cast<uint32_t>(x.value);
            if (x.number == 2) m.program_id = x.value;
          });
          break;
        }
        case 9: {
          PartialOpInfo& i = h.op_infos.emplace_back();
          each(f.bytes, [&](const wire::Field& x) {
            if (x.number == 1) i.opcode = static_cast<uint32_t>(x.value);
            if (x.number == 2) i.op_name = static_cast<uint32_t>(x.value);
            if (x.number == 3) i.source = static_cast<uint32_t>(x.value);
            if (x.number == 4) i.category = static_cast<uint32_t>(x.value);
          });
          break;
        }
        case 10:
          h.devices.push_back(device(f.bytes));
          break;
        case 11:
          each(f.bytes, [&](const wire::Field& x) {
            if (x.number == 1) {
              if (x.value > static_cast<uint64_t>(StepSource::kNone)) bad("unknown step source");
              h.steps.source = static_cast<StepSource>(x.value);
            } else if (x.number == 2) {
              PartialStep& s = h.steps.steps.emplace_back();
              each(x.bytes, [&](const wire::Field& y) {
                switch (y.number) {
                  case 1:
                    s.number = wire::unzigzag(y.value);
                    break;
                  case 2:
                    s.name = static_cast<uint32_t>(y.value);
                    break;
                  case 3:
                    s.start_ps = wire::unzigzag(y.value);
                    break;
                  case 4:
                    s.end_ps = wire::unzigzag(y.value);
                    break;
                  case 5:
                    s.windows = static_cast<uint32_t>(y.value);
                    break;
                  case 6:
                    s.longest_window_ps = y.as_int64();
                    break;
                  case 7:
                    s.compiling = y.value != 0;
                    break;
                }
              });
            } else if (x.number == 3) {
              PartialStepWindow& w = h.steps.windows.emplace_back();
              each(x.bytes, [&](const wire::Field& y) {
                if (y.number == 1) w.plane = wire::unzigzag(y.value);
                if (y.number == 2) w.start_ps = wire::unzigzag(y.value);
                if (y.number == 3) w.end_ps = wire::unzigzag(y.value);
                if (y.number == 4) w.step = static_cast<uint32_t>(y.value);
              });
            }
          });
          break;
        case 12:
          h.compile = compile(f.bytes);
          break;
        case 13:
          h.warnings.emplace_back(f.bytes);
          break;
        case 14:
          h.kernels = kernels(f.bytes);
          break;
        case 15:
          h.steady = steady(f.bytes);
          break;
        case 16:
          each(f.bytes, [&](const wire::Field& x) {
            if (x.number == 1) h.captured_on.emplace_back(x.bytes);
            if (x.number == 2) h.gpu = x.value != 0;
            if (x.number == 3) h.tpu = x.value != 0;
          });
          break;
      }
    });
    if (strings.empty() || !strings.front().empty())
      bad("the string table does not start with \"\"");
    h.strings.assign(std::move(strings));
    if (h.modules.empty()) bad("no module table");
    validate(h);
    return h;
  }

  // Every index points inside its table, and every time, duration and count is within what a
  // capture can hold: times within 2^56 ps (20 hours from the host's zero; scaled benchmark
  // profiles span several hours), totals within 2^61 ps, so that sums stay within int64.
  void validate(const HostPartial& h) const {
    constexpr int64_t kTime = int64_t{1} << 56;
    constexpr int64_t kTotal = int64_t{1} << 61;
    auto time = [&](int64_t t) {
      if (t < -kTime || t > kTime) bad(fmt::format("a time out of range ({} ps)", t));
    };
    auto count = [&](uint64_t n) {
      if (n > (uint64_t{1} << 40)) bad(fmt::format("a count out of range ({})", n));
    };
    for (const PartialDevice& d : h.devices) {
      const DeviceTimeline& t = d.timeline;
      for (int64_t v : {d.op_busy_ps, d.op_span_ps, t.span_ps, t.busy_ps, t.compute_ps, t.comm_ps,
                        t.comm_exposed_ps, t.memcpy_ps, t.memcpy_exposed_ps, t.idle_ps,
                        t.idle_in_modules_ps, t.idle_between_modules_ps})
        time(v);
      time(t.set_apart_ps);
      for (uint64_t n : {d.op_events, d.op_selected, d.op_device_clock_events, d.op_set_apart,
                         t.events, t.executions})
        count(n);
      if (d.op_device_clock_events > d.op_events)
        bad("more op events on the device clock than op events");
      for (const PartialOpGroup& g : d.op_groups) {
        count(g.duration.count);
        count(g.first);
        for (int64_t v : {g.duration.min, g.duration.max, g.self_ps}) time(v);
        if (g.duration.sum < -kTotal || g.duration.sum > kTotal)
          bad("an op group's total is out of range");
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
        if (e.end_ps < e.begin_ps) bad("a collective execution ends before it starts");
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
      bad("the host's clock zero is out of range");
    const size_t strings = h.strings.size(), modules = h.modules.size(), infos = h.op_infos.size();
    auto str = [&](uint32_t id) {
      if (id >= strings) bad(fmt::format("string {} of {}", id, strings));
    };
    auto module = [&](uint32_t id) {
      if (id >= modules) bad(fmt::format("module {} of {}", id, modules));
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
        for (uint32_t s :
             {g.hlo_op, g.kernel, g.display, g.opcode, g.op_name, g.source, g.category})
          str(s);
        if (g.duration.count == 0) bad("an empty op group");
      }
      for (const PartialExecution& e : d.executions) {
        module(e.module);
        if (uint64_t{e.first_op} + e.ops > d.execution_ops.size())
          bad("an execution's ops run past the table");
        if (e.end_ps < e.start_ps) bad("an execution ends before it starts");
      }
      for (const PartialExecutionOp& o : d.execution_ops) {
        str(o.name);
        if (o.info >= infos) bad(fmt::format("op info {} of {}", o.info, infos));
      }
      for (const PartialCollectiveOp& op : d.collective_ops) {
        module(op.module);
        str(op.name);
        str(op.opcode);
        str(op.shapes);
      }
      for (const PartialCollectiveExecution& e : d.collective_executions)
        if (e.op >= d.collective_ops.size()) bad("a collective execution of an unknown op");
      const PartialFlame& fl = d.flame;
      for (int64_t v : {fl.busy_ps, fl.span_ps, fl.idle_during_modules_ps,
                        fl.idle_between_modules_ps, fl.set_apart_ps})
        time(v);
      count(fl.events);
      for (uint32_t m : fl.modules_used) module(m);
      for (const auto& frames : fl.by)
        for (const PartialFlameFrame& fr : frames) {
          str(fr.name);
          module(fr.module);
          if (fr.self_ps < 0 || fr.self_ps > kTotal) bad("a flame stack's weight is out of range");
        }
    }
    for (const PartialKernelDevice& d : h.kernels.devices)
      for (const PartialKernel& k : d.kernels) {
        str(k.name);
        str(k.display);
        count(k.count);
        if (k.count == 0) bad("a kernel without launches");
        for (int64_t v : {k.min_ps, k.max_ps}) time(v);
        if (k.total_ps < 0 || k.total_ps > kTotal) bad("a kernel's total is out of range");
        for (const PartialKernelConfig& c : k.configs) {
          str(c.details);
          count(c.count);
          if (c.total_ps < 0 || c.total_ps > kTotal)
            bad("a kernel configuration's total is out of range");
        }
        for (const PartialKernelOp& op : k.ops) {
          module(op.module);
          str(op.hlo_op);
          str(op.op_name);
          count(op.first);
          if (op.total_ps < 0 || op.total_ps > kTotal) bad("a kernel op's total is out of range");
        }
      }
    for (const PartialStep& s : h.steps.steps) str(s.name);
    for (const PartialStepWindow& w : h.steps.windows)
      if (w.step >= h.steps.steps.size()) bad("a step window of an unknown step");
  }

  // `decompressed`: the bytes are a .gz file's contents (for the message of a file cut short).
  // Each host goes to `fn` as soon as it is read.
  void file(std::string_view bytes, bool decompressed,
            const std::function<void(HostPartial&&)>& fn) const {
    wire::Reader top(bytes, origin_);
    try {
      fields(top, fn);
    } catch (const InputError&) {
      if (!bytes.empty()) throw_if_cut_short(bytes, top.field_offset(), decompressed);
      throw;
    }
  }

 private:
  void fields(wire::Reader& top, const std::function<void(HostPartial&&)>& fn) const {
    bool magic = false;
    uint64_t version = 0;
    wire::Field field;
    while (top.next(field)) {
      const wire::Field& f = field;
      if (f.number == 1 && f.type == wire::WireType::kLen) magic = f.bytes == kPartialMagic;
      if (!magic) throw InputError(path_, "not a jaxprof partial file");
      if (f.number == 2) {
        version = f.value;
        if (version != kPartialVersion)
          throw InputError(path_, fmt::format("partial file version {}; this jaxprof reads "
                                              "version {}: write it again with `jaxprof partial`",
                                              version, kPartialVersion));
      }
      if (f.number == 3) {
        if (version == 0) bad("hosts before the version");
        fn(host(f.bytes));
      }
    }
    if (!magic) throw InputError(path_, "not a jaxprof partial file");
    if (version == 0) bad("no version");
  }

  // A file cut off while it was written (or copied) ends inside its last top-level field, a
  // host mostly: says so when the field at `offset` runs past the end by a length a host can
  // have (damaged bytes give lengths of terabytes).
  void throw_if_cut_short(std::string_view bytes, int64_t offset, bool decompressed) const {
    if (offset < 0 || static_cast<uint64_t>(offset) >= bytes.size()) return;
    uint64_t end = wire::end_past_message(bytes, static_cast<uint64_t>(offset));
    if (end == 0 || end - static_cast<uint64_t>(offset) > std::numeric_limits<uint32_t>::max())
      return;
    bool is_host = static_cast<uint8_t>(bytes[offset]) == (3 << 3 | 2);
    std::string what = is_host ? "a host's partial" : "its last field";
    what += end == bytes.size() + 1
                ? " is cut short"
                : fmt::format(" needs {} bytes more than there are", end - bytes.size());
    throw truncated_input(path_, what, offset, bytes.size(), decompressed);
  }

  const uint8_t* origin_;
  const std::string& path_;
};

}  // namespace

bool is_partial_file_name(std::string_view name) {
  return name.ends_with(".partial") || name.ends_with(".partial.gz");
}

bool looks_like_partial(std::string_view bytes) {
  // Field 1, length-delimited, then the magic.
  return bytes.size() > kPartialMagic.size() + 2 && bytes[0] == 0x0a &&
         static_cast<size_t>(bytes[1]) == kPartialMagic.size() &&
         bytes.substr(2, kPartialMagic.size()) == kPartialMagic;
}

std::string write_partial_file(const std::vector<const HostPartial*>& hosts) {
  Writer w;
  w.bytes(1, kPartialMagic);
  w.varint(2, kPartialVersion);
  for (const HostPartial* h : hosts) w.message(3, host(*h));
  return w.take();
}

std::string write_partial_file(const PartialSet& set) {
  Writer w;
  w.bytes(1, kPartialMagic);
  w.varint(2, kPartialVersion);
  set.for_each_host([&](uint32_t, const HostPartial& h) { w.message(3, host(h)); });
  return w.take();
}

void read_partial_file_each(std::string_view bytes, const std::string& path,
                            const std::function<void(HostPartial&&)>& fn, bool decompressed) {
  try {
    FileReader(bytes, path).file(bytes, decompressed, [&](HostPartial&& h) {
      // A host whose profile's path was not recorded is named by the file it came from, so
      // that every message about it names a file.
      if (h.path.empty()) h.path = path;
      h.partial_file = path;
      fn(std::move(h));
    });
  } catch (const InputError& e) {
    if (e.file().empty()) throw e.with_file(path);
    throw;
  }
}

std::vector<HostPartial> read_partial_file(std::string_view bytes, const std::string& path,
                                           bool decompressed) {
  std::vector<HostPartial> hosts;
  read_partial_file_each(
      bytes, path, [&](HostPartial&& h) { hosts.push_back(std::move(h)); }, decompressed);
  return hosts;
}

void read_partial_path_each(const std::string& path, const std::function<void(HostPartial&&)>& fn) {
  std::shared_ptr<Buffer> buffer = Buffer::open(path);
  read_partial_file_each(buffer->view(), path, fn, buffer->compressed());
}

std::vector<HostPartial> read_partial_path(const std::string& path) {
  std::vector<HostPartial> hosts;
  read_partial_path_each(path, [&](HostPartial&& h) { hosts.push_back(std::move(h)); });
  return hosts;
}

void save_partial_file(const std::string& path, const std::string& bytes) {
  if (path.ends_with(".gz")) {
    gzFile f = gzopen(path.c_str(), "wb6");
    if (!f) throw InputError(path, "cannot write the partial file");
    bool ok = gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size())) ==
              static_cast<int>(bytes.size());
    ok = gzclose(f) == Z_OK && ok;
    if (!ok) throw InputError(path, "cannot write the partial file");
    return;
  }
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) throw InputError(path, "cannot write the partial file");
  bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  ok = std::fclose(f) == 0 && ok;
  if (!ok) throw InputError(path, "cannot write the partial file");
}

}  // namespace jaxprof
