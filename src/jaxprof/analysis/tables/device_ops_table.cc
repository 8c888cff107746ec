#include "jaxprof/analysis/tables/device_ops_table.h"

#include <algorithm>
#include <limits>
#include <unordered_map>

#include "jaxprof/analysis/cost/hlo_cost.h"
#include "jaxprof/analysis/ops/device_events.h"
#include "jaxprof/analysis/ops/event_category.h"
#include "jaxprof/analysis/ops/memory_op.h"
#include "jaxprof/analysis/ops/self_time.h"
#include "jaxprof/analysis/partial/partial_build.h"
#include "jaxprof/analysis/steps/steady_state.h"
#include "jaxprof/analysis/tables/execution_rows.h"

namespace jaxprof {
namespace {

// What is the same for every event of one (module, hlo op, metadata, copy or not): the key `ops`
// describes its groups by, described once.
struct OpKey {
  uint32_t module = 0, hlo_op = 0, metadata = 0;
  bool memory = false;
  bool operator==(const OpKey&) const = default;
};
struct OpKeyHash {
  size_t operator()(const OpKey& k) const {
    uint64_t h = (static_cast<uint64_t>(k.module) << 32 | k.hlo_op) * 0x9E3779B97F4A7C15ull;
    return std::hash<uint64_t>()(h ^ (static_cast<uint64_t>(k.metadata) << 1 | k.memory));
  }
};
struct OpCodes {
  int32_t name = 0, opcode = -1, category = 0, source = -1, op_path = -1;
  bool cost = false;
  uint64_t flops = 0, bytes = 0;
};

struct Columns {
  RecordTable t;
  RecordColumn *host, *device, *line, *name, *hlo_op, *opcode, *category, *module, *program, *exec,
      *step, *start, *dur, *self, *tstart, *tdur, *warmup, *autotuning, *source, *op_path, *flops,
      *bytes;
};

void declare(Columns& c) {
  RecordTable& t = c.t;
  t.name = "device_ops";
  c.host = &t.add("host", TableType::kString, "", "the host (file) the device belongs to");
  c.device = &t.add("device", TableType::kString, "", "the device, as `ops` names it");
  c.line =
      &t.add("line", TableType::kString, "", "the line (stream, XLA Ops, thread) of the event");
  c.name = &t.add("name", TableType::kString, "", "the event's display name (kernel or op name)");
  c.hlo_op = &t.add("hlo_op", TableType::kString, "", "the HLO op it ran; null when none");
  c.opcode =
      &t.add("opcode", TableType::kString, "", "the HLO opcode, when the HLO index knows it");
  c.category = &t.add("category", TableType::kString, "", "the op category (docs/categories.md)");
  c.module = &t.add("module", TableType::kString, "", "the XLA module; null when none");
  c.program = &t.add("program_id", TableType::kUInt64, "", "the module's program id; null if none");
  c.exec = &t.add("execution", TableType::kInt64, "",
                  "its module execution (module_executions.execution); null when none");
  c.step = &t.add("step", TableType::kInt64, "",
                  "the step holding its start (steps.step); null if none");
  c.start = &t.add("start_ps", TableType::kInt64, "ps",
                   "start on the op's clock (the device's own where the event carries it)");
  c.dur = &t.add("duration_ps", TableType::kInt64, "ps", "duration on the op's clock, as `ops`");
  c.self = &t.add("self_ps", TableType::kInt64, "ps", "duration less the ops nested in it");
  c.tstart = &t.add("timeline_start_ps", TableType::kInt64, "ps", "start on the timeline's clock");
  c.tdur = &t.add("timeline_duration_ps", TableType::kInt64, "ps", "duration on the timeline");
  c.warmup = &t.add("warmup", TableType::kBool, "", "in a warm-up execution that `ops` sets apart");
  c.autotuning =
      &t.add("autotuning", TableType::kBool, "", "in an autotuning execution `ops` sets apart");
  c.source = &t.add("source", TableType::kString, "", "the Python source line (file:line)");
  c.op_path = &t.add("op_path", TableType::kString, "", "the JAX op path (jit(f)/dot_general)");
  c.flops = &t.add("flops", TableType::kUInt64, "flops",
                   "of its HLO op, the roofline's cost model; null if unknown");
  c.bytes = &t.add("bytes_accessed", TableType::kUInt64, "bytes",
                   "read and written by its HLO op, as flops; null if unknown");
}

OpCodes describe(const Profile& p, uint32_t plane, uint32_t e, bool memory, StringCodes& names,
                 StringCodes& opcodes, StringCodes& categories, StringCodes& sources,
                 StringCodes& paths) {
  OpCodes k;
  OpDescription d = describe_op_event(p, plane, e, memory);
  k.name = names.code(p.event_display_name(e));
  if (!d.opcode.empty()) k.opcode = opcodes.code(d.opcode);
  k.category = categories.code(d.category);
  if (!d.source.empty()) k.source = sources.code(d.source);
  if (!d.op_name.empty()) k.op_path = paths.code(d.op_name);
  if (const HloInstruction* instr = event_instruction(p, e)) {
    const ModuleKey& mk = p.modules[p.events.module[e]];
    if (const HloModule* mod = p.hlo.find(hlo_program_key(mk.program_id), p.str(mk.name))) {
      OpCost cost = hlo_instruction_cost(*mod, *instr);
      if (cost.known()) {
        k.cost = true;
        k.flops = cost.flops;
        k.bytes = cost.bytes_accessed;
      }
    }
  }
  return k;
}

void push_code(RecordColumn& col, int32_t code) {
  if (code < 0)
    col.push_null();
  else
    col.push_code(code);
}

}  // namespace

RecordTable device_ops_table(const Profile& p) {
  const std::vector<DeviceLines> devices = op_devices(p);
  std::vector<uint32_t> needed;
  uint64_t capacity = 0;
  for (const DeviceLines& d : devices) {
    needed.insert(needed.end(), d.lines.begin(), d.lines.end());
    capacity += d.line_events(p);
  }
  // The file's pages are dropped after each stage that reads it, so that what the stage
  // allocates does not sit on top of the whole mapped file.
  p.require_lines(needed);
  p.release_file_pages();
  const ExecutionRows& rows = execution_rows(p);
  p.release_file_pages();
  const SteadyState& steady = steady_state(p, SteadyStateOptions{});
  const StepLookup steps(table_steps(p));
  p.release_file_pages();

  Columns c;
  declare(c);
  for (RecordColumn& col : c.t.columns) col.reserve(capacity);
  StringCodes hosts(*c.host), device_names(*c.device), lines(*c.line), names(*c.name),
      hlo_ops(*c.hlo_op), opcodes(*c.opcode), categories(*c.category), modules(*c.module),
      sources(*c.source), paths(*c.op_path);
  // Strings of the profile's table map to codes once each.
  std::vector<int32_t> hlo_code(p.strings.size(), -1);
  std::vector<int32_t> module_code(p.modules.size(), -1);
  std::unordered_map<OpKey, OpCodes, OpKeyHash> described;
  const Events& ev = p.events;
  std::vector<int64_t> self;
  std::vector<uint8_t> participates;

  for (size_t di = 0; di < devices.size(); ++di) {
    const DeviceLines& dev = devices[di];
    const uint32_t host = p.planes[dev.plane].host;
    const int32_t host_code = hosts.code(p.hosts[host].name);
    const int32_t device_code = device_names.code(dev.name);
    const std::vector<ExecutionRole>* roles =
        di < steady.roles.size() ? &steady.roles[di] : nullptr;
    const uint32_t first_exec = di < rows.first.size() ? rows.first[di] : 0;
    for (uint32_t li : dev.lines) {
      const Line& line = p.lines[li];
      const uint32_t begin = line.first_event, n = line.event_count;
      if (dev.hlo_ops_only) {
        participates.assign(n, 0);
        for (uint32_t k = 0; k < n; ++k) participates[k] = dev.counts(ev, begin + k);
      }
      compute_op_self_times(ev, line, self, dev.hlo_ops_only ? &participates : nullptr);
      const LineMemoryOps memory_op(p, li);
      const bool maybe_memory = !memory_op.never();
      const int32_t line_code =
          lines.code(p.str(line.display_name != 0 ? line.display_name : line.name));
      for (uint32_t k = 0; k < n; ++k) {
        const uint32_t e = begin + k;
        if (!dev.counts(ev, e)) continue;
        const bool memory = maybe_memory && memory_op(e) != MemoryOp::kNone;
        OpKey key{ev.module[e], ev.hlo_op[e], ev.metadata[e], memory};
        auto it = described.find(key);
        if (it == described.end())
          it = described
                   .emplace(key, describe(p, dev.plane, e, memory, names, opcodes, categories,
                                          sources, paths))
                   .first;
        const OpCodes& op = it->second;
        c.host->push_code(host_code);
        c.device->push_code(device_code);
        c.line->push_code(line_code);
        c.name->push_code(op.name);
        if (ev.hlo_op[e] == 0) {
          c.hlo_op->push_null();
        } else {
          int32_t& code = hlo_code[ev.hlo_op[e]];
          if (code < 0) code = hlo_ops.code(p.str(ev.hlo_op[e]));
          c.hlo_op->push_code(code);
        }
        push_code(*c.opcode, op.opcode);
        c.category->push_code(op.category);
        const ModuleKey& mk = p.modules[ev.module[e]];
        if (ev.module[e] == 0 || mk.name == 0) {
          c.module->push_null();
        } else {
          int32_t& code = module_code[ev.module[e]];
          if (code < 0) code = modules.code(p.str(mk.name));
          c.module->push_code(code);
        }
        if (mk.program_id == kNoProgram || ev.module[e] == 0)
          c.program->push_null();
        else
          c.program->push_u(mk.program_id);
        const int32_t x = rows.of(e);
        if (x < 0)
          c.exec->push_null();
        else
          c.exec->push(x);
        if (auto s = steps.at(host, ev.start_ps[e]))
          c.step->push(*s);
        else
          c.step->push_null();
        const bool device_clock = ev.on_device_clock(line, e);
        c.start->push(device_clock ? ev.device_start_ps[e] : ev.start_ps[e]);
        c.dur->push(device_clock ? ev.device_duration_ps[e] : ev.duration_ps[e]);
        c.self->push(self[k]);
        c.tstart->push(ev.start_ps[e]);
        c.tdur->push(ev.duration_ps[e]);
        // Set apart by default (steady_state.h): by its execution's role.
        bool apart = steady.set_apart(e);
        bool autotuning = false;
        if (apart && roles && x >= 0) {
          const uint32_t local = static_cast<uint32_t>(x) - first_exec;
          autotuning = local < roles->size() && (*roles)[local] == ExecutionRole::kAutotuning;
        }
        c.warmup->push_b(apart && !autotuning);
        c.autotuning->push_b(autotuning);
        push_code(*c.source, op.source);
        push_code(*c.op_path, op.op_path);
        if (op.cost) {
          c.flops->push_u(op.flops);
          c.bytes->push_u(op.bytes);
        } else {
          c.flops->push_null();
          c.bytes->push_null();
        }
        ++c.t.rows;
      }
    }
  }
  c.t.finish();
  return std::move(c.t);
}

}  // namespace jaxprof
