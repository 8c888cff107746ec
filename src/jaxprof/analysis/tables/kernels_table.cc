#include "jaxprof/analysis/tables/kernels_table.h"

#include <array>
#include <optional>
#include <string_view>
#include <unordered_map>

#include "jaxprof/analysis/ops/device_events.h"
#include "jaxprof/analysis/ops/kernel_details.h"
#include "jaxprof/analysis/ops/memory_op.h"
#include "jaxprof/analysis/steps/steady_state.h"
#include "jaxprof/analysis/tables/execution_rows.h"

namespace jaxprof {
namespace {

// The stats a launch row needs, from the event's own list or its metadata's.
struct LaunchStats {
  std::string_view details;
  bool memory_op = false;  // memcpy_details or memset_details: a copy or fill, not a kernel
};

void scan(const Profile& p, const std::vector<Stat>& stats, LaunchStats& out) {
  for (const Stat& s : stats) {
    std::string_view name = p.str(s.name);
    if (name == "kernel_details" && s.value.is_text() && out.details.empty())
      out.details = s.value.str;
    else if (name == "memcpy_details" || name == "memset_details")
      out.memory_op = true;
  }
}

struct Columns {
  RecordTable t;
  RecordColumn *host, *device, *line, *name, *hlo_op, *module, *exec, *start, *dur, *warmup,
      *autotuning, *grid[3], *block[3], *regs, *static_shared, *dynamic_shared, *shared,
      *private_mem, *occupancy, *details;
};

void declare(Columns& c) {
  RecordTable& t = c.t;
  t.name = "kernels";
  c.host = &t.add("host", TableType::kString, "", "the host");
  c.device = &t.add("device", TableType::kString, "", "the GPU, as `kernels` names it");
  c.line = &t.add("line", TableType::kString, "", "the stream (line) it ran on");
  c.name = &t.add("name", TableType::kString, "", "the kernel's display name");
  c.hlo_op = &t.add("hlo_op", TableType::kString, "", "the HLO op that launched it; null if none");
  c.module = &t.add("module", TableType::kString, "", "the XLA module; null when none");
  c.exec = &t.add("execution", TableType::kInt64, "",
                  "its module execution (module_executions.execution); null when none");
  c.start = &t.add("start_ps", TableType::kInt64, "ps", "start on the timeline");
  c.dur = &t.add("duration_ps", TableType::kInt64, "ps", "duration, as `kernels`");
  c.warmup = &t.add("warmup", TableType::kBool, "", "in a warm-up execution `kernels` sets apart");
  c.autotuning =
      &t.add("autotuning", TableType::kBool, "", "in an autotuning execution `kernels` sets apart");
  const char* axes[3] = {"x", "y", "z"};
  for (int i = 0; i < 3; ++i)
    c.grid[i] = &t.add(std::string("grid_") + axes[i], TableType::kInt64, "",
                       std::string("blocks per grid along ") + axes[i] + "; null if unknown");
  for (int i = 0; i < 3; ++i)
    c.block[i] = &t.add(std::string("block_") + axes[i], TableType::kInt64, "",
                        std::string("threads per block along ") + axes[i] + "; null if unknown");
  c.regs = &t.add("registers", TableType::kInt64, "", "registers per thread; null if unknown");
  c.static_shared = &t.add("static_shared_bytes", TableType::kInt64, "bytes",
                           "static shared memory per block; null if unknown");
  c.dynamic_shared = &t.add("dynamic_shared_bytes", TableType::kInt64, "bytes",
                            "dynamic shared memory per block; null if unknown");
  c.shared = &t.add("shared_bytes", TableType::kInt64, "bytes",
                    "shared memory per block, however the producer states it (static + dynamic, "
                    "shm, AMD group_mem); null if unknown");
  c.private_mem = &t.add("private_bytes", TableType::kInt64, "bytes",
                         "AMD scratch memory per work item; null if unknown");
  c.occupancy =
      &t.add("occupancy_pct", TableType::kDouble, "",
             "occupancy in percent, as the producer reports it (occ_pct); null if unknown");
  c.details =
      &t.add("details", TableType::kString, "", "the kernel_details stat as written; null if none");
}

void push(RecordColumn& col, const std::optional<int64_t>& v) {
  if (v)
    col.push(*v);
  else
    col.push_null();
}

void push_config(Columns& c, const KernelDetails& k) {
  for (int i = 0; i < 3; ++i) {
    push(*c.grid[i], k.grid ? std::optional<int64_t>((*k.grid)[i]) : std::nullopt);
    push(*c.block[i], k.block ? std::optional<int64_t>((*k.block)[i]) : std::nullopt);
  }
  push(*c.regs, k.registers);
  push(*c.static_shared, k.static_shared);
  push(*c.dynamic_shared, k.dynamic_shared);
  push(*c.shared, k.shared_bytes());
  push(*c.private_mem, k.private_mem);
  if (k.occupancy_pct)
    c.occupancy->push_f(*k.occupancy_pct);
  else
    c.occupancy->push_null();
}

}  // namespace

RecordTable kernels_table(const Profile& p) {
  // The GPUs and their stream lines as `kernels` reads them; each GPU's device index in
  // op_devices() order, which the executions' numbering and roles follow.
  const std::vector<DeviceLines> devices = op_devices(p);
  std::vector<std::pair<uint32_t, size_t>> gpus;  // plane, device index
  std::vector<uint32_t> needed;
  for (size_t di = 0; di < devices.size(); ++di) {
    const uint32_t pi = devices[di].plane;
    if (p.planes[pi].kind != PlaneKind::kGpu) continue;
    gpus.push_back({pi, di});
    for (uint32_t li : p.planes[pi].lines)
      if (p.lines[li].event_count > 0 && is_op_line(p, p.lines[li])) needed.push_back(li);
  }
  p.require_lines(needed);
  const ExecutionRows& rows = execution_rows(p);
  const SteadyState& steady = steady_state(p, SteadyStateOptions{});

  Columns c;
  declare(c);
  StringCodes hosts(*c.host), device_names(*c.device), lines(*c.line), names(*c.name),
      hlo_ops(*c.hlo_op), modules(*c.module), details(*c.details);
  std::unordered_map<uint32_t, LaunchStats> metadata_stats;  // read once per metadata entry
  std::unordered_map<std::string_view, KernelDetails> parsed;
  const Events& ev = p.events;
  for (auto [pi, di] : gpus) {
    const Plane& plane = p.planes[pi];
    const int32_t host_code = hosts.code(p.hosts[plane.host].name);
    const int32_t device_code = device_names.code(devices[di].name);
    const std::vector<ExecutionRole>* roles =
        di < steady.roles.size() ? &steady.roles[di] : nullptr;
    const uint32_t first_exec = di < rows.first.size() ? rows.first[di] : 0;
    for (uint32_t li : plane.lines) {
      const Line& line = p.lines[li];
      if (line.event_count == 0 || !is_op_line(p, line)) continue;
      const LineMemoryOps memory_op(p, li);
      const int32_t line_code =
          lines.code(p.str(line.display_name != 0 ? line.display_name : line.name));
      for (uint32_t e = line.first_event; e < line.first_event + line.event_count; ++e) {
        LaunchStats launch;
        scan(p, p.event_stats(pi, e), launch);
        const uint32_t mi = ev.metadata[e];
        auto [it, inserted] = metadata_stats.try_emplace(mi);
        if (inserted) scan(p, p.metadata_stats(mi), it->second);
        if (launch.details.empty()) launch.details = it->second.details;
        // As `kernels`: copies and fills are not kernels unless a kernel_details stat says so.
        if ((launch.memory_op || it->second.memory_op || memory_op(e) != MemoryOp::kNone) &&
            launch.details.empty())
          continue;
        c.host->push_code(host_code);
        c.device->push_code(device_code);
        c.line->push_code(line_code);
        c.name->push_code(names.code(p.event_display_name(e)));
        details.push(launch.details, !launch.details.empty());
        if (ev.hlo_op[e] == 0)
          c.hlo_op->push_null();
        else
          c.hlo_op->push_code(hlo_ops.code(p.str(ev.hlo_op[e])));
        const ModuleKey& mk = p.modules[ev.module[e]];
        if (ev.module[e] == 0 || mk.name == 0)
          c.module->push_null();
        else
          c.module->push_code(modules.code(p.str(mk.name)));
        const int32_t x = rows.of(e);
        if (x < 0)
          c.exec->push_null();
        else
          c.exec->push(x);
        c.start->push(ev.start_ps[e]);
        c.dur->push(ev.op_duration_ps(line, e));
        const bool apart = steady.set_apart(e);
        bool autotuning = false;
        if (apart && roles && x >= 0) {
          const uint32_t local = static_cast<uint32_t>(x) - first_exec;
          autotuning = local < roles->size() && (*roles)[local] == ExecutionRole::kAutotuning;
        }
        c.warmup->push_b(apart && !autotuning);
        c.autotuning->push_b(autotuning);
        auto [k, fresh] = parsed.try_emplace(launch.details);
        if (fresh) k->second = parse_kernel_details(launch.details);
        push_config(c, k->second);
        ++c.t.rows;
      }
    }
  }
  c.t.finish();
  return std::move(c.t);
}

}  // namespace jaxprof
